"""The feed-forward exercise's oracle: torch's own layers in an nn.Sequential (Linear, GELU,
Linear, Dropout) given the drawn weights, in eval mode or, for a train-mode test, in train mode
with the global RNG seeded as the grader seeds it before the call."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn

from grader.spec import TestCaseSpec

SLUG = "feed-forward"
DEFAULT_DROPOUT = 0.1


def oracle(
    test: TestCaseSpec, inputs: tuple[tuple[object, ...], ...], parameters: dict[str, np.ndarray]
) -> tuple[np.ndarray, ...]:
    ((x,),) = inputs
    hidden, d_model = parameters["fc1.weight"].shape
    block = nn.Sequential(
        OrderedDict(
            fc1=nn.Linear(d_model, hidden),
            gelu=nn.GELU(),
            fc2=nn.Linear(hidden, d_model),
            dropout=nn.Dropout(float(test.init.get("dropout", DEFAULT_DROPOUT))),
        )
    )
    block.load_state_dict({name: torch.from_numpy(value) for name, value in parameters.items()})
    block.train(TRAIN_MODE_IS_SET_HERE)
    with torch.no_grad(), torch.random.fork_rng():
        seed_like_the_grader()
        return (block(torch.from_numpy(np.asarray(x))).numpy(),)
