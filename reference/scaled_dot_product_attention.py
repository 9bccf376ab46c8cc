"""Scaled dot-product attention (Vaswani et al., 2017, eq. 1), with an optional additive mask.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V

Shapes: any leading dimensions (batch, heads) are carried through; T is the number of queries,
S the number of keys and values, d_k the query and key size, d_v the value size.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

from grader.variants import WrongVariant, mask_fill_forms


def scaled_dot_product(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attend from q (..., T, d_k) over k (..., S, d_k) and v (..., S, d_v).

    `mask` is added to the scores and broadcast to (..., T, S): 0 where a query may attend,
    -inf where it may not. Returns the values (..., T, d_v) and the attention (..., T, S).
    """
    d_k = q.size(-1)
    scaled = q @ k.transpose(-1, -2) / math.sqrt(d_k)  # (..., T, S)
    if mask is not None:
        scaled = scaled + mask  # broadcast to (..., T, S)
    attention = F.softmax(scaled, dim=-1)  # (..., T, S), each row sums to 1
    values = attention @ v  # (..., T, d_v)
    return values, attention


# --- Known mistakes -------------------------------------------------------------------------
# Each is the reference with one step changed, an `AttentionSteps` whose other steps are the
# reference's; two of them pair up into the student who makes both mistakes.


class AttentionSteps(NamedTuple):
    """The reference, step by step, each step changeable. The defaults are the reference's."""

    scale_exponent: float = 0.5  # the scores are divided by d_k ** scale_exponent
    # None: the mask is added to the scores. A fill: scores.masked_fill(mask == 0, fill), the
    # mask read as 1 = keep: its zeros, the keys a query may see, get the fill; the keys it
    # hides keep their scores (with -inf, the last query sees no key at all: NaN).
    keep_mask_fill: float | None = None
    softmax_dim: int = -1

    def __call__(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        scores = q @ k.transpose(-1, -2) / q.size(-1) ** self.scale_exponent  # (..., T, S)
        if mask is not None and self.keep_mask_fill is None:
            scores = scores + mask
        elif mask is not None:
            scores = scores.masked_fill(mask == 0, self.keep_mask_fill)
        attention = F.softmax(scores, dim=self.softmax_dim)
        return attention @ v, attention


KEEP_MASK_MESSAGE = (
    "Your output matches scores.masked_fill(mask == 0, ...), which reads the mask as 1 = keep: "
    "whatever the fill (-inf, a large negative number or a tiny one), it replaces the scores of "
    "the very keys each query may see and leaves those it must not see. This exercise's mask is "
    "additive, 0 where a query may attend and -inf where it may not: add it to the scores, "
    "scores + mask, before the softmax."
)


VARIANTS = (
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(d_k) scaling: divide the "
        "scores q @ k^T by math.sqrt(d_k), where d_k = q.size(-1), before the softmax.",
        entry=AttentionSteps(scale_exponent=0.0),
    ),
    WrongVariant(
        code="scaled-by-d-k",
        message="Your output matches scores divided by d_k: divide them by the square root "
        "of d_k instead.",
        entry=AttentionSteps(scale_exponent=1.0),
    ),
    WrongVariant(
        code="softmax-over-queries",
        message="Your output matches a softmax over the queries' axis (dim=-2): each query's "
        "weights must sum to 1 over the keys, the last axis (dim=-1).",
        entry=AttentionSteps(softmax_dim=-2),
    ),
    *mask_fill_forms(
        "boolean-keep-mask", KEEP_MASK_MESSAGE, lambda fill: AttentionSteps(keep_mask_fill=fill)
    ),
)
