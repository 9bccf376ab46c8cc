"""The forward pass of a small GPT (GPT-2's architecture), from token ids to next-token logits.

    x = wte(ids) + wpe(positions)                    # token and learned position embeddings
    for each block:                                  # pre-norm residual blocks
        x = x + attn(ln1(x))                         # causal multi-head self-attention
        x = x + mlp(ln2(x))                          # Linear(d, 4d), GELU, Linear(4d, d)
    logits = ln_f(x) @ wte.weight^T                  # final LayerNorm, head tied to wte

`attn.qkv` maps each token to 3 * d_model features: the queries, then the keys, then the values,
d_model each, each split into num_heads heads of head_dim = d_model / num_heads features.

Shapes: B is the batch size, T the sequence length (T <= max_len), V the vocabulary size.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import LARGE_NEGATIVE_FILL, WrongVariant


class CausalSelfAttention(nn.Module):
    causal = True
    # For the known mistake of the mask the wrong way round (the past hidden), in each fill.
    future_hidden = True
    mask_fill = float("-inf")

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape  # x: (B, T, d_model)
        q, k, v = (self.split_heads(part) for part in self.qkv(x).split(C, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, nh, T, T)
        if self.causal:
            later = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)
            hidden = later if self.future_hidden else ~later
            scores = scores.masked_fill(hidden, self.mask_fill)  # no token sees a later one
        values = scores.softmax(dim=-1) @ v  # (B, nh, T, head_dim)
        merged = values.transpose(1, 2).reshape(B, T, C)  # (B, T, nh * head_dim)
        out: torch.Tensor = self.proj(merged)
        return out

    def split_heads(self, part: torch.Tensor) -> torch.Tensor:
        B, T, _ = part.shape  # part: (B, T, d_model)
        return part.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)


class MLP(nn.Module):
    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.fc2(F.gelu(self.fc1(x)))  # exact (erf) GELU
        return out


class Block(nn.Module):
    attention = CausalSelfAttention

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = self.attention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))  # pre-norm: normalise the branch's input, not the sum
        out: torch.Tensor = x + self.mlp(self.ln2(x))
        return out


class GPT(nn.Module):
    block = Block

    def __init__(
        self, vocab_size: int, max_len: int, d_model: int, num_heads: int, num_layers: int
    ) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(self.block(d_model, num_heads) for _ in range(num_layers))
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # ids: (B, T) int64
        x = self.embed(ids)  # (B, T, d_model)
        for block in self.blocks:
            x = block(x)
        return self.final_norm(x) @ self.wte.weight.T  # tied head: (B, T, V)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[-1], device=ids.device)  # (T,)
        embedded: torch.Tensor = self.wte(ids) + self.wpe(positions)  # (B, T, d) + (T, d)
        return embedded

    def final_norm(self, x: torch.Tensor) -> torch.Tensor:
        normed: torch.Tensor = self.ln_f(x)
        return normed


# --- Known mistakes -------------------------------------------------------------------------


class _UnmaskedAttention(CausalSelfAttention):
    causal = False


def _mask_inverted(fill: float) -> type[GPT]:
    class InvertedMaskAttention(CausalSelfAttention):
        future_hidden = False
        mask_fill = fill

    class InvertedMaskBlock(Block):
        attention = InvertedMaskAttention

    class MaskInverted(GPT):
        block = InvertedMaskBlock

    return MaskInverted


class _PostNormBlock(Block):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln1(x + self.attn(x))  # the original Transformer's order: norm after the sum
        out: torch.Tensor = self.ln2(x + self.mlp(x))
        return out


class _UnmaskedBlock(Block):
    attention = _UnmaskedAttention


class _NoCausalMask(GPT):
    block = _UnmaskedBlock


class _PostNorm(GPT):
    block = _PostNormBlock


class _PositionsNotAdded(GPT):
    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        embedded: torch.Tensor = self.wte(ids)
        return embedded


class _NoFinalNorm(GPT):
    def final_norm(self, x: torch.Tensor) -> torch.Tensor:
        return x


# Scores divided by sqrt(d_model) rather than sqrt(head_dim) is no variant: with the grader's
# drawn weights (LayerNorm gains within +-1/sqrt(d_model)) the scores stay near 0, the attention
# near uniform either way, and the logits move by less than the 4 decimals compared.
VARIANTS = (
    WrongVariant(
        "no-causal-mask",
        "Your logits match attention without the causal mask: every token also attends to the "
        "later ones, so the model would see the tokens it has to predict. Set the scores above "
        "the diagonal to -inf before the softmax.",
        _NoCausalMask,
    ),
    # In -inf and a large negative fill only: the grader's weights keep the scores near 0 (see
    # above), so filling the past with 0 is no mask at all, the no-causal-mask variant.
    *(
        WrongVariant(
            "mask-inverted",
            "Your logits match the causal mask the wrong way round: the scores on and below the "
            "diagonal are filled, so each token sees only the later ones (and the last one none "
            "at all). Fill the scores above the diagonal, the later keys, with -inf instead.",
            _mask_inverted(fill),
        )
        for fill in (float("-inf"), LARGE_NEGATIVE_FILL)
    ),
    WrongVariant(
        "post-norm",
        "Your logits match post-norm blocks, x = ln(x + sublayer(x)), as in the original "
        "Transformer. GPT-2 normalises each sub-layer's input and adds its output to the "
        "unnormalised residual stream: x = x + attn(ln1(x)), then x = x + mlp(ln2(x)).",
        _PostNorm,
    ),
    WrongVariant(
        "positions-not-added",
        "Your logits match a model without position embeddings: add wpe(positions), positions "
        "0 .. T-1, to the token embeddings before the first block.",
        _PositionsNotAdded,
    ),
    WrongVariant(
        "no-final-norm",
        "Your logits match a model without the final LayerNorm: apply ln_f to the last block's "
        "output before the tied head.",
        _NoFinalNorm,
    ),
)
