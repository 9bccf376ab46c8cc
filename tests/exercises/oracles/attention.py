"""The attention exercises' oracles: the seed notebook's own head, the built-ins
(`nn.MultiheadAttention`, `F.scaled_dot_product_attention`) and einsum formulations."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters

Inputs = tuple[np.ndarray | None, ...]


def _seed_single_head_attention() -> type[nn.Module]:
    """The seed notebook's `SingleHeadAttention`, verbatim but for its annotations."""

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            v = self.value_gen(embedded)

            scores = q @ torch.transpose(k, 1, 2)
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim**0.5)

            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            mask = lower_triangular == 0
            scores = scores.masked_fill(mask, float("-inf"))
            scores = nn.functional.softmax(scores, dim=2)

            result: torch.Tensor = scores @ v
            return result

    return SingleHeadAttention


def _tensors(inputs: Inputs) -> list[torch.Tensor | None]:
    return [None if a is None else torch.from_numpy(a).to(torch.float64) for a in inputs]


def _params(parameters: Parameters) -> dict[str, torch.Tensor]:
    return {name: torch.from_numpy(value).to(torch.float64) for name, value in parameters.items()}


def _merge_heads(heads: torch.Tensor) -> torch.Tensor:
    """(B, h, T, d) -> (B, T, h * d), head 0's features first."""
    merged = torch.einsum("bhtd->bthd", heads)
    return merged.flatten(start_dim=2)


def _seed_heads(test: TestCaseSpec, embedded: np.ndarray | None) -> torch.Tensor:
    """The seed's own head, created num_heads times in a row (each one seeds the global RNG, so
    call it under fork_rng), run on `embedded` and concatenated: (B, T, attention_dim)."""
    head_type = _seed_single_head_attention()
    embedding_dim, attention_dim, num_heads = (
        int(test.init[name]) for name in ("embedding_dim", "attention_dim", "num_heads")
    )
    heads = [head_type(embedding_dim, attention_dim // num_heads) for _ in range(num_heads)]
    assert embedded is not None
    with torch.no_grad():
        return torch.cat([head(torch.from_numpy(embedded)) for head in heads], dim=2)


def _oracle_multi_headed_self_attention(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    with torch.random.fork_rng():
        output = _seed_heads(test, inputs[0])
    return (torch.round(output, decimals=4).numpy(),)


def _oracle_multi_headed_self_attention_projection(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    # NeetCode's newer version: W^O's weights are the global RNG's next draws after the heads'.
    with torch.random.fork_rng():
        concatenated = _seed_heads(test, inputs[0])  # (B, T, attention_dim)
        attention_dim = concatenated.shape[-1]
        w_o = nn.Linear(attention_dim, attention_dim, bias=False).weight.detach()
    output = torch.einsum("btc,oc->bto", concatenated, w_o)  # x W^O^T, as nn.Linear does
    return (torch.round(output, decimals=4).numpy(),)


def _oracle_multi_head_attention(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    (x,), p = _tensors(inputs), _params(parameters)
    assert x is not None
    h = int(test.init["num_heads"])

    def project(name: str) -> torch.Tensor:  # every head at once: (B, h, T, head_dim)
        weight = torch.stack([p[f"heads.{i}.{name}.weight"] for i in range(h)])  # (h, d, C)
        bias = torch.stack([p[f"heads.{i}.{name}.bias"] for i in range(h)])  # (h, d)
        return torch.einsum("btc,hdc->bhtd", x, weight) + bias[:, None, :]

    q, k, v = project("query"), project("key"), project("value")
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.shape[-1])
    attention = scores.softmax(dim=-1)
    heads = torch.einsum("bhts,bhsd->bhtd", attention, v)
    output = F.linear(_merge_heads(heads), p["output_proj.weight"], p["output_proj.bias"])
    return output.numpy(), attention.numpy()


def _oracle_fused_qkv_attention(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    x, *rest = _tensors(inputs)
    assert x is not None
    mask = rest[0] if rest else None
    p = _params(parameters)
    h, d_model = int(test.init["num_heads"]), int(test.init["d_model"])
    head_dim = d_model // h
    # qkv_layer's rows, head by head: [q_0, k_0, v_0, q_1, ...], head_dim rows each.
    weight = p["qkv_layer.weight"].reshape(h, 3, head_dim, -1)  # (h, 3, head_dim, C)
    bias = p["qkv_layer.bias"].reshape(h, 3, head_dim)  # (h, 3, head_dim)
    q, k, v = (
        torch.einsum("btc,hdc->bhtd", x, weight[:, j]) + bias[:, j, None, :] for j in range(3)
    )
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, h, T, head_dim)
    output = F.linear(_merge_heads(heads), p["linear_layer.weight"], p["linear_layer.bias"])
    return (output.numpy(),)


def _oracle_torch_multihead_parity(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    builtin = nn.MultiheadAttention(
        int(test.init["embed_dim"]), int(test.init["num_heads"]), batch_first=True
    )
    builtin.load_state_dict({name: torch.from_numpy(v) for name, v in parameters.items()})
    query, key, value = (torch.from_numpy(a) for a in inputs if a is not None)
    with torch.no_grad():
        output, weights = builtin.eval()(query, key, value)
    return output.numpy(), weights.numpy()


def _oracle_numpy_multi_head_attention(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    x, w_q, w_k, w_v, w_o = (t for t in _tensors(inputs) if t is not None)
    q, k, v = (torch.einsum("btc,hcd->bhtd", x, w) for w in (w_q, w_k, w_v))
    heads = F.scaled_dot_product_attention(q, k, v)  # (B, H, T, D)
    return ((_merge_heads(heads) @ w_o).numpy(),)


def _oracle_scaled_dot_product_attention(
    test: TestCaseSpec, inputs: Inputs, parameters: Parameters
) -> Arrays:
    q, k, v, *rest = _tensors(inputs)
    assert q is not None and k is not None and v is not None
    mask = rest[0] if rest else None
    values = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    # Attending over the identity matrix returns the attention weights themselves.
    identity = torch.eye(k.shape[-2], dtype=k.dtype).expand(*k.shape[:-1], k.shape[-2])
    attention = F.scaled_dot_product_attention(q, k, identity, attn_mask=mask)
    return values.numpy(), attention.numpy()


def _one_call(oracle: Callable[[TestCaseSpec, Inputs, Parameters], Arrays]) -> Oracle:
    """An oracle of a test's one call, whose inputs are all arrays (or None)."""
    return lambda test, calls, parameters: oracle(test, cast(Inputs, calls[0]), parameters)


# Outputs rounded to 4 decimals by the exercise's contract: compared as the grader compares.
ROUNDED = {"multi-headed-self-attention", "multi-headed-self-attention-projection"}
ORACLES: dict[str, Oracle] = {
    "multi-headed-self-attention": _one_call(_oracle_multi_headed_self_attention),
    "multi-headed-self-attention-projection": _one_call(
        _oracle_multi_headed_self_attention_projection
    ),
    "multi-head-attention": _one_call(_oracle_multi_head_attention),
    "fused-qkv-attention": _one_call(_oracle_fused_qkv_attention),
    "torch-multihead-parity": _one_call(_oracle_torch_multihead_parity),
    "numpy-multi-head-attention": _one_call(_oracle_numpy_multi_head_attention),
    "scaled-dot-product-attention": _one_call(_oracle_scaled_dot_product_attention),
}
