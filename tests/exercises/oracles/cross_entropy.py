"""The cross-entropy exercise's oracle: torch's own F.cross_entropy, on the logits flattened to
(N, C) and the targets to (N,), since the exercise keeps the classes on the last axis."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters

DEFAULT_IGNORE_INDEX = -100


def _cross_entropy(
    test: TestCaseSpec, calls: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    ((logits, targets, *rest),) = calls
    ignore_index = int(np.asarray(rest[0])) if rest else DEFAULT_IGNORE_INDEX
    scores = torch.as_tensor(np.asarray(logits))
    loss = F.cross_entropy(
        scores.reshape(-1, scores.shape[-1]),
        torch.as_tensor(np.asarray(targets)).reshape(-1),
        ignore_index=ignore_index,
    )
    return (loss.numpy(),)


ORACLES: dict[str, Oracle] = {"cross-entropy": _cross_entropy}
