"""Multi-head attention with one fused projection for queries, keys and values.

A single `qkv_layer` maps each token to 3 * d_model features, laid out head by head: for head h,
features [3*h*head_dim, 3*(h+1)*head_dim) hold that head's query, key and value, in that order,
head_dim each. The heads attend independently (scaled dot-product attention, with an optional
additive mask), are put back side by side, and `linear_layer` mixes them.

Shapes: B is the batch size, T the sequence length, C the input dimension (input_dim).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from grader.variants import WrongVariant, mask_fill_forms
from reference.scaled_dot_product_attention import (
    KEEP_MASK_MESSAGE,
    AttentionSteps,
    scaled_dot_product,
)


class MultiheadAttention(nn.Module):
    def __init__(self, input_dim: int, d_model: int, num_heads: int) -> None:
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.input_dim = input_dim
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv_layer = nn.Linear(input_dim, 3 * d_model)
        self.linear_layer = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        # x: (B, T, C); mask: broadcastable to (B, num_heads, T, T)
        q, k, v = self.split_heads(self.qkv_layer(x))  # each (B, num_heads, T, head_dim)
        values = self.attend(q, k, v, mask)  # (B, num_heads, T, head_dim)
        out: torch.Tensor = self.linear_layer(self.merge_heads(values))  # (B, T, d_model)
        return out

    def attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        return scaled_dot_product(q, k, v, mask)[0]

    def split_heads(self, qkv: torch.Tensor) -> tuple[torch.Tensor, ...]:
        B, T, _ = qkv.shape  # qkv: (B, T, 3 * d_model)
        qkv = qkv.reshape(B, T, self.num_heads, 3 * self.head_dim)  # (B, T, nh, 3 * head_dim)
        qkv = qkv.permute(0, 2, 1, 3)  # (B, nh, T, 3 * head_dim)
        return qkv.chunk(3, dim=-1)  # q, k, v: each (B, nh, T, head_dim)

    def merge_heads(self, values: torch.Tensor) -> torch.Tensor:
        B, _, T, _ = values.shape  # values: (B, nh, T, head_dim)
        values = values.permute(0, 2, 1, 3)  # (B, T, nh, head_dim): undo the head permute
        return values.reshape(B, T, self.d_model)  # (B, T, nh * head_dim) = (B, T, d_model)


# --- Known mistakes -------------------------------------------------------------------------


class _HeadsMixed(MultiheadAttention):
    def merge_heads(self, values: torch.Tensor) -> torch.Tensor:
        B, _, T, _ = values.shape
        return values.reshape(B, T, self.d_model)  # the head axis is still before T


class _MissingScaling(MultiheadAttention):
    def split_heads(self, qkv: torch.Tensor) -> tuple[torch.Tensor, ...]:
        q, k, v = super().split_heads(qkv)
        return q * math.sqrt(self.head_dim), k, v  # cancels the 1/sqrt(head_dim)


class _BlockLayout(MultiheadAttention):
    def split_heads(self, qkv: torch.Tensor) -> tuple[torch.Tensor, ...]:
        B, T, _ = qkv.shape
        return tuple(  # q = qkv[..., :d_model], k = next d_model, v = last d_model
            part.reshape(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
            for part in qkv.chunk(3, dim=-1)
        )


class _MaskIgnored(MultiheadAttention):
    def attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        return super().attend(q, k, v, None)


def _keep_mask(fill: float) -> type[MultiheadAttention]:
    """Attention with the mask read as 1 = keep, filled with `fill`."""
    attend_wrongly = AttentionSteps(keep_mask_fill=fill)

    class KeepMask(MultiheadAttention):
        def attend(
            self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None
        ) -> torch.Tensor:
            return attend_wrongly(q, k, v, mask)[0]

    return KeepMask


VARIANTS = (
    WrongVariant(
        code="heads-mixed",
        message="Your output matches reshaping the attention values (B, num_heads, T, head_dim) "
        "straight to (B, T, d_model), which mixes heads and positions: undo the head permute "
        "first, values.permute(0, 2, 1, 3), then reshape to (B, T, d_model).",
        entry=_HeadsMixed,
    ),
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(d) scaling: divide the scores "
        "q @ k^T by the square root of head_dim before the softmax.",
        entry=_MissingScaling,
    ),
    WrongVariant(
        code="block-qkv-layout",
        message="Your output matches q, k, v taken as three blocks of d_model features "
        "(qkv.chunk(3) before splitting heads). This exercise lays qkv out head by head: "
        "reshape to (B, T, num_heads, 3 * head_dim) first, then chunk the last dimension.",
        entry=_BlockLayout,
    ),
    WrongVariant(
        code="mask-ignored",
        message="Your output matches attention that never applies the mask: every token also "
        "attends to the ones the mask hides. Pass the mask on to the attention and add it to "
        "the scores before the softmax.",
        entry=_MaskIgnored,
    ),
    *mask_fill_forms("boolean-keep-mask", KEEP_MASK_MESSAGE, _keep_mask),
)
