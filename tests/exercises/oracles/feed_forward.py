"""The feed-forward exercise's oracle: torch's own layers in an nn.Sequential (Linear, GELU,
Linear, Dropout) given the drawn weights, in eval mode or, for a train-mode test, in train mode
with the global RNG seeded as the grader seeds it right before the call."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn

from grader.call_execution import TRAIN_MODE_SEED
from grader.contract import Arg
from grader.spec import Mode, TestCaseSpec
from oracles import Arrays, Oracle, Parameters

DEFAULT_DROPOUT = 0.1


def _feed_forward(
    test: TestCaseSpec, calls: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    ((x,),) = calls
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
    block.train(test.mode is Mode.TRAIN)
    with torch.no_grad(), torch.random.fork_rng():
        torch.manual_seed(TRAIN_MODE_SEED)
        return (block(torch.from_numpy(np.asarray(x))).numpy(),)


ORACLES: dict[str, Oracle] = {"feed-forward": _feed_forward}
