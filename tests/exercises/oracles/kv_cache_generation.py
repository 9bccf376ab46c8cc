"""An independent oracle for kv-cache-generation: no cache at all. Every prefill and decode is
the uncached model on the whole sequence so far (its last positions), with torch's own
scaled_dot_product_attention."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters

SLUG = "kv-cache-generation"


def oracle(
    test: TestCaseSpec, inputs: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    weights = {name: torch.from_numpy(value) for name, value in parameters.items()}
    n_head = int(test.init["n_head"])
    outputs: list[np.ndarray] = []
    sequence = torch.zeros(0, dtype=torch.int64)
    for call, (idx,) in zip(test.calls, inputs, strict=True):
        assert isinstance(idx, np.ndarray)
        tokens = torch.from_numpy(idx)
        if call.method == "forward":
            outputs.append(logits(weights, n_head, tokens).numpy())
            continue
        sequence = tokens if call.method == "prefill" else torch.cat([sequence, tokens], dim=1)
        outputs.append(logits(weights, n_head, sequence)[:, -tokens.shape[1] :].numpy())
    return tuple(outputs)


def logits(weights: dict[str, torch.Tensor], n_head: int, idx: torch.Tensor) -> torch.Tensor:
    B, T = idx.shape
    head_size = weights["c_proj.weight"].shape[0] // n_head
    x = F.embedding(idx, weights["wte.weight"]) + weights["wpe.weight"][:T]
    qkv = F.linear(x, weights["c_attn.weight"], weights["c_attn.bias"])
    q, k, v = (part.view(B, T, n_head, head_size).transpose(1, 2) for part in qkv.chunk(3, dim=-1))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).flatten(2)
    x = x + F.linear(y, weights["c_proj.weight"], weights["c_proj.bias"])
    return F.linear(x, weights["lm_head.weight"])


ORACLES: dict[str, Oracle] = {SLUG: oracle}
