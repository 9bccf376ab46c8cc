"""layer-norm's reference against torch's own layer normalisation, in float64."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters


def _layer_norm(
    test: TestCaseSpec, calls: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    ((x,),) = calls
    assert isinstance(x, np.ndarray)
    weight, bias = (torch.from_numpy(parameters[name]).double() for name in ("weight", "bias"))
    eps = float(test.init.get("eps", 1e-5))
    output = F.layer_norm(torch.from_numpy(x).double(), weight.shape, weight, bias, eps)
    return (output.numpy().astype(x.dtype),)


ORACLES: dict[str, Oracle] = {"layer-norm": _layer_norm}
