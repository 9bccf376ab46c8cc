"""Multi-headed causal self-attention, exactly as NeetCode's exercise asks for it.

`num_heads` copies of the given `SingleHeadAttention`, each of size attention_dim // num_heads,
run side by side; their outputs are concatenated along the last dimension and rounded to 4
decimals. Both constructors call `torch.manual_seed(0)`, so the weights depend only on the order
in which layers are created: every head gets the same key, query and value weights.

Shapes: B is the batch size, T the context length, C the embedding dimension.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from grader.contract import Scalar
from grader.variants import WeightProbe, WrongVariant, mask_fill_forms


class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.heads = nn.ModuleList(
            self.SingleHeadAttention(embedding_dim, head_size) for _ in range(num_heads)
        )

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        # embedded: (B, T, C)
        head_outputs = [head(embedded) for head in self.heads]  # num_heads x (B, T, head_size)
        concatenated = torch.cat(head_outputs, dim=2)  # (B, T, num_heads * head_size)
        return torch.round(concatenated, decimals=4)

    class SingleHeadAttention(nn.Module):
        """The exercise's given head, unchanged but for `torch.Tensor` annotations."""

        def __init__(self, embedding_dim: int, attention_dim: int) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            k: torch.Tensor = self.key_gen(embedded)
            q: torch.Tensor = self.query_gen(embedded)
            v: torch.Tensor = self.value_gen(embedded)

            scores = q @ torch.transpose(k, 1, 2)  # (B, T, T)
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim**0.5)

            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            mask = lower_triangular == 0
            scores = scores.masked_fill(mask, float("-inf"))
            scores = nn.functional.softmax(scores, dim=2)

            return scores @ v  # (B, T, attention_dim)


# --- Known mistakes -------------------------------------------------------------------------
# Each wrong variant is the reference with one step done differently: `_Head` and `_Variant`
# expose those steps as class attributes, and each mistake is a subclass that changes one.


class _Head(MultiHeadedSelfAttention.SingleHeadAttention):
    scaled = True
    causal = True
    future_hidden = True  # False: the mask the wrong way round, the past and present hidden
    mask_fill = float("-inf")
    softmax_dim = 2

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        k: torch.Tensor = self.key_gen(embedded)  # (B, T, head_size)
        q: torch.Tensor = self.query_gen(embedded)  # (B, T, head_size)
        v: torch.Tensor = self.value_gen(embedded)  # (B, T, head_size)
        scores = q @ k.transpose(1, 2)  # (B, T, T)
        if self.scaled:
            scores = scores / math.sqrt(k.shape[2])
        if self.causal:
            T = scores.shape[1]
            past_and_present = torch.tril(torch.ones(T, T)) == 1  # key <= query
            hidden = ~past_and_present if self.future_hidden else past_and_present
            scores = scores.masked_fill(hidden, self.mask_fill)
        return F.softmax(scores, dim=self.softmax_dim) @ v  # (B, T, head_size)


class _Variant(MultiHeadedSelfAttention):
    SingleHeadAttention = _Head
    concat_dim = 2
    decimals = 4

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        concatenated = torch.cat([head(embedded) for head in self.heads], dim=self.concat_dim)
        return torch.round(self.project(concatenated), decimals=self.decimals)

    def project(self, concatenated: torch.Tensor) -> torch.Tensor:
        return concatenated


class _UnscaledHead(_Head):
    scaled = False


class _UnmaskedHead(_Head):
    causal = False


class _SoftmaxOverQueriesHead(_Head):
    softmax_dim = 1


class _MissingScaling(_Variant):
    SingleHeadAttention = _UnscaledHead


class _NoCausalMask(_Variant):
    SingleHeadAttention = _UnmaskedHead


class _SoftmaxOverQueries(_Variant):
    SingleHeadAttention = _SoftmaxOverQueriesHead


def _mask_inverted(fill: float) -> type[_Variant]:
    class InvertedMaskHead(_Head):
        future_hidden = False
        mask_fill = fill

    class MaskInverted(_Variant):
        SingleHeadAttention = InvertedMaskHead

    return MaskInverted


class _FullSizeHeads(MultiHeadedSelfAttention):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        # head_size = (attention_dim * num_heads) // num_heads = attention_dim
        super().__init__(embedding_dim, attention_dim * num_heads, num_heads)


class _ConcatAlongSequence(_Variant):
    concat_dim = 1


class _RoundedTo2(_Variant):
    decimals = 2


class _RoundedTo3(_Variant):
    decimals = 3


class WithOutputProjection(_Variant):
    """The heads followed by an output projection created after them, without a bias: NeetCode's
    newer version of this exercise. reference.multi_headed_self_attention_projection adds it to
    the mistakes above to make its own."""

    bias = False

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super().__init__(embedding_dim, attention_dim, num_heads)  # seeds, then the heads
        self.proj = nn.Linear(attention_dim, attention_dim, bias=self.bias)

    def project(self, concatenated: torch.Tensor) -> torch.Tensor:
        projected: torch.Tensor = self.proj(concatenated)  # (B, T, attention_dim)
        return projected


class _ExtraProjectionWithBias(WithOutputProjection):
    bias = True


# One diagnosis, bias or not: either way the student added a layer this exercise doesn't have.
_EXTRA_PROJECTION = (
    "Your output matches the heads followed by an extra nn.Linear output projection: this "
    "exercise returns the concatenated heads as they are, with no projection. If you meant to "
    "solve NeetCode's newer version, which adds nn.Linear(attention_dim, attention_dim, "
    "bias=False) after the heads, submit it to the `multi-headed-self-attention-projection` "
    "exercise instead."
)

VARIANTS = (
    WrongVariant(
        code="missing-scaling",
        message="Your output matches attention without the 1/sqrt(d) scaling: divide the scores "
        "q @ k^T by the square root of the head size before the softmax.",
        entry=_MissingScaling,
    ),
    WrongVariant(
        code="no-causal-mask",
        message="Your output matches attention without the causal mask: every position also "
        "attends to later ones. Fill the scores above the diagonal with -inf before the softmax.",
        entry=_NoCausalMask,
    ),
    *mask_fill_forms(
        "mask-inverted",
        "Your output matches the causal mask the wrong way round: it fills the scores on and "
        "below the diagonal, so each position sees only the later ones (and the last one none "
        "at all). Fill the scores above the diagonal, the later keys, with -inf instead.",
        _mask_inverted,
    ),
    WrongVariant(
        code="full-size-heads",
        message="Your output matches heads of size attention_dim each: every head must have "
        "size attention_dim // num_heads, so that the concatenation has attention_dim features.",
        entry=_FullSizeHeads,
    ),
    WrongVariant(
        code="concat-along-sequence",
        message="Your output matches the heads concatenated along the sequence (dim=1): "
        "concatenate them along the last dimension (dim=2), the features.",
        entry=_ConcatAlongSequence,
    ),
    WrongVariant(
        code="softmax-over-queries",
        message="Your output matches a softmax over dim=1, the queries: the weights of each "
        "query must sum to 1 over the keys, the last dimension (dim=2 or dim=-1).",
        entry=_SoftmaxOverQueries,
    ),
    WrongVariant(
        code="rounded-to-2-decimals",
        message="Your output is rounded to 2 decimals: round it to 4, "
        "with torch.round(x, decimals=4).",
        entry=_RoundedTo2,
    ),
    WrongVariant(
        code="rounded-to-3-decimals",
        message="Your output is rounded to 3 decimals: round it to 4, "
        "with torch.round(x, decimals=4).",
        entry=_RoundedTo3,
    ),
    WrongVariant(
        code="extra-output-projection", message=_EXTRA_PROJECTION, entry=WithOutputProjection
    ),
    WrongVariant(
        code="extra-output-projection", message=_EXTRA_PROJECTION, entry=_ExtraProjectionWithBias
    ),
)


def _reference_head_weights(init_kwargs: dict[str, Scalar]) -> dict[str, np.ndarray]:
    """The weights every head of the reference gets (they are all alike), by name suffix."""
    with torch.random.fork_rng():  # leave the caller's global RNG as it was
        head = MultiHeadedSelfAttention(**init_kwargs).heads[0]  # type: ignore[arg-type]
    return {name: value.detach().numpy().copy() for name, value in head.state_dict().items()}


WEIGHT_PROBE = WeightProbe(
    parameters=_reference_head_weights,
    message="With the reference's weights loaded into your heads, your output is right: the "
    "math is correct, but your layers were created in another order than the starter's (for "
    "example query before key), so under torch.manual_seed(0) they got different weights. "
    "Use self.SingleHeadAttention as given, which creates key, query, value in that order.",
)
