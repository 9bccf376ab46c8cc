"""An independent oracle for adamw-training-step: torch's own AdamW, clip_grad_norm_ and
cross_entropy, on a model rebuilt from the drawn parameters."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SLUG = "adamw-training-step"


def oracle(
    test: Any, inputs: tuple[tuple[np.ndarray, ...], ...], parameters: dict[str, np.ndarray]
) -> tuple[np.ndarray, ...]:
    init = test.init
    model = nn.Sequential(
        nn.Linear(init["d_in"], init["d_hidden"]),
        nn.Tanh(),
        nn.Linear(init["d_hidden"], init["d_out"]),
    )
    model.load_state_dict(
        {name[len("model.") :]: torch.from_numpy(value) for name, value in parameters.items()}
    )
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=init["lr"], weight_decay=init["weight_decay"]
    )
    outputs: list[np.ndarray] = []
    for step, arrays in zip(test.steps, inputs, strict=True):
        tensors = [torch.from_numpy(array) for array in arrays]
        if step.method == "step":
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tensors[0]), tensors[1])
            torch.autograd.backward(loss)
            norm = nn.utils.clip_grad_norm_(model.parameters(), init["max_norm"])
            optimizer.step()
            outputs += [loss.detach().numpy(), norm.numpy()]
        else:
            with torch.no_grad():
                outputs.append(model(tensors[0]).numpy())
    return tuple(outputs)


ORACLES = {SLUG: oracle}
