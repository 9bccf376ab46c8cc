"""An independent oracle for adamw-training-step: torch's own AdamW, clip_grad_norm_ and
cross_entropy, on a model rebuilt from the drawn parameters."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters

SLUG = "adamw-training-step"


def oracle(
    test: TestCaseSpec, inputs: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    init = test.init
    model = nn.Sequential(
        nn.Linear(int(init["d_in"]), int(init["d_hidden"])),
        nn.Tanh(),
        nn.Linear(int(init["d_hidden"]), int(init["d_out"])),
    )
    model.load_state_dict(
        {name.removeprefix("model."): torch.from_numpy(value) for name, value in parameters.items()}
    )
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=float(init["lr"]), weight_decay=float(init["weight_decay"])
    )
    outputs: list[np.ndarray] = []
    for call, args in zip(test.calls, inputs, strict=True):
        tensors = [torch.from_numpy(arg) for arg in args if isinstance(arg, np.ndarray)]
        if call.method == "train_step":
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tensors[0]), tensors[1])
            torch.autograd.backward(loss)
            norm = nn.utils.clip_grad_norm_(model.parameters(), float(init["max_norm"]))
            optimizer.step()
            outputs += [loss.detach().numpy(), norm.numpy()]
        else:
            with torch.no_grad():
                outputs.append(model(tensors[0]).numpy())
    return tuple(outputs)


ORACLES: dict[str, Oracle] = {SLUG: oracle}
