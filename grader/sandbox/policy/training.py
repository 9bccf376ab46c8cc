"""What a submission may use of a training step's modules: `torch.nn.utils`' gradient clipping,
which comes with torch, and `torch.optim`'s optimizers, where the exercise lists torch.optim.

Both change only the tensors the code hands them (a module's parameters and their gradients,
copies made for each call). Left out: the parametrizations and `stateless` of torch.nn.utils,
which rewrite a module's weights and calls; the schedulers and SWA helpers of torch.optim, which
no exercise needs, and its function that swaps a module's parameters in place.

An optimizer imports torch._dynamo (with torch.fx and sympy: 70 MiB, two seconds) the first
time it runs, which a confined child could not: a warm process that allows torch.optim imports
it before forking (`IMPORTED_ON_FIRST_USE`), and only such a one.
"""

from __future__ import annotations

import types
from collections.abc import Mapping

import torch

NN_UTILS_NAMES = frozenset(
    {
        "clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
        "get_total_norm", "parameters_to_vector", "vector_to_parameters",
    }
)  # fmt: skip

IMPORTED_ON_FIRST_USE: Mapping[str, tuple[str, ...]] = {"torch.optim": ("torch._dynamo",)}


def optimizers(module: types.ModuleType) -> frozenset[str]:
    """torch.optim's optimizers, and their base class for one's own."""
    return frozenset(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and isinstance(value, type)
        and issubclass(value, torch.optim.Optimizer)
    )  # fmt: skip
