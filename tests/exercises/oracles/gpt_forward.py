"""gpt-forward's reference against torch's own layers, in float64: F.embedding, F.layer_norm,
F.scaled_dot_product_attention with is_causal, F.gelu and the tied head as F.linear."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters


def _oracle_gpt_forward(
    test: TestCaseSpec, calls: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    ((ids,),) = calls
    assert isinstance(ids, np.ndarray)
    p = {name: torch.from_numpy(value).double() for name, value in parameters.items()}
    tokens = torch.from_numpy(ids)
    x = F.embedding(tokens, p["wte.weight"]) + p["wpe.weight"][: tokens.shape[-1]]
    for i in range(int(test.init["num_layers"])):
        block = {
            name.removeprefix(f"blocks.{i}."): v
            for name, v in p.items()
            if name.startswith(f"blocks.{i}.")
        }
        x = x + _attention(_norm(x, block, "ln1"), block, int(test.init["num_heads"]))
        hidden = F.gelu(
            F.linear(_norm(x, block, "ln2"), block["mlp.fc1.weight"], block["mlp.fc1.bias"])
        )
        x = x + F.linear(hidden, block["mlp.fc2.weight"], block["mlp.fc2.bias"])
    logits = F.linear(_norm(x, p, "ln_f"), p["wte.weight"])
    return (logits.float().numpy(),)


def _norm(x: torch.Tensor, p: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    weight = p[f"{name}.weight"]
    return F.layer_norm(x, weight.shape, weight, p[f"{name}.bias"], eps=1e-5)


def _attention(x: torch.Tensor, p: dict[str, torch.Tensor], num_heads: int) -> torch.Tensor:
    batch, length, d_model = x.shape
    qkv = F.linear(x, p["attn.qkv.weight"], p["attn.qkv.bias"])  # (B, T, 3d): q, then k, then v
    q, k, v = qkv.view(batch, length, 3, num_heads, d_model // num_heads).permute(2, 0, 3, 1, 4)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, head_dim)
    merged = heads.permute(0, 2, 1, 3).reshape(batch, length, d_model)
    return F.linear(merged, p["attn.proj.weight"], p["attn.proj.bias"])


ORACLES: dict[str, Oracle] = {"gpt-forward": _oracle_gpt_forward}
