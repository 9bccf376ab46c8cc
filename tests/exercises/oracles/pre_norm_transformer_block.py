"""pre-norm-transformer-block's reference against torch's built-ins, in float64: F.layer_norm,
F.scaled_dot_product_attention with one boolean mask, and F.gelu."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters


def _pre_norm_block(
    test: TestCaseSpec, calls: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    ((x_array, *rest),) = calls
    assert isinstance(x_array, np.ndarray)
    p = {name: torch.from_numpy(value).double() for name, value in parameters.items()}
    x = torch.from_numpy(x_array).double()
    keep = torch.from_numpy(rest[0]) if rest and isinstance(rest[0], np.ndarray) else None
    B, T, D = x.shape
    h = int(test.init["num_heads"])

    def norm(name: str, stream: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(stream, (D,), p[f"{name}.weight"], p[f"{name}.bias"], 1e-5)

    def heads(part: torch.Tensor) -> torch.Tensor:  # (B, T, D) -> (B, h, T, D / h)
        return torch.einsum("bthd->bhtd", part.reshape(B, T, h, D // h))

    allowed = torch.ones(T, T, dtype=torch.bool).tril().expand(B, 1, T, T)
    if keep is not None:
        allowed = allowed & keep.reshape(B, 1, 1, T)
    qkv = F.linear(norm("ln1", x), p["attn.qkv.weight"], p["attn.qkv.bias"])
    q, k, v = (heads(qkv[..., j * D : (j + 1) * D]) for j in range(3))
    attended = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    merged = torch.einsum("bhtd->bthd", attended).reshape(B, T, D)
    x = x + F.linear(merged, p["attn.proj.weight"], p["attn.proj.bias"])
    hidden = F.gelu(F.linear(norm("ln2", x), p["ffn.fc1.weight"], p["ffn.fc1.bias"]))
    x = x + F.linear(hidden, p["ffn.fc2.weight"], p["ffn.fc2.bias"])
    return (x.numpy().astype(x_array.dtype),)


ORACLES: dict[str, Oracle] = {"pre-norm-transformer-block": _pre_norm_block}
