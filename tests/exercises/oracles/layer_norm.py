"""layer-norm's reference against torch's own layer normalisation, in float64."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.spec import TestCaseSpec

SLUG = "layer-norm"


def oracle(
    test: TestCaseSpec,
    inputs: tuple[tuple[np.ndarray | None, ...], ...],
    parameters: dict[str, np.ndarray],
) -> tuple[np.ndarray, ...]:
    ((x,),) = inputs
    assert x is not None
    weight, bias = (torch.from_numpy(parameters[name]).double() for name in ("weight", "bias"))
    eps = float(test.init.get("eps", 1e-5))
    output = F.layer_norm(torch.from_numpy(x).double(), weight.shape, weight, bias, eps)
    return (output.to(getattr(torch, str(x.dtype))).numpy(),)
