"""Scaled dot-product attention (Vaswani et al., 2017, eq. 1), with an optional additive mask.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V

Shapes: any leading dimensions (batch, heads) are carried through; T is the number of queries,
S the number of keys and values, d_k the query and key size, d_v the value size.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from grader.variants import WrongVariant


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
# Each is the reference on changed arguments. The scaling mistakes rescale the query:
# q * sqrt(d_k) cancels the scaling, and q / sqrt(d_k) doubles it into a division by d_k.


def _missing_scaling(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    return scaled_dot_product(q * math.sqrt(q.size(-1)), k, v, mask)


def _scaled_by_d_k(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    return scaled_dot_product(q / math.sqrt(q.size(-1)), k, v, mask)


def _boolean_keep_mask(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    # scores.masked_fill(mask == 0, -inf) reads the mask as 1 = keep: it removes exactly the
    # scores the additive mask keeps (its zeros), as adding -inf there and 0 elsewhere would.
    if mask is not None:
        mask = torch.zeros_like(mask).masked_fill(mask == 0, float("-inf"))
    return scaled_dot_product(q, k, v, mask)


VARIANTS = (
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(d_k) scaling: divide the "
        "scores q @ k^T by math.sqrt(d_k), where d_k = q.size(-1), before the softmax.",
        entry=_missing_scaling,
    ),
    WrongVariant(
        code="scaled-by-d-k",
        message="Your output matches scores divided by d_k: divide them by the square root "
        "of d_k instead.",
        entry=_scaled_by_d_k,
    ),
    WrongVariant(
        code="boolean-keep-mask",
        message="Your output matches scores.masked_fill(mask == 0, -inf), which reads the mask "
        "as 1 = keep: it removes the very keys each query may see (the last query then sees "
        "none, hence NaN). This exercise's mask is additive, 0 where a query may attend and -inf "
        "where it may not: add it to the scores, scores + mask, before the softmax.",
        entry=_boolean_keep_mask,
    ),
)
