"""Multi-headed causal self-attention with an output projection: NeetCode's newer version.

The seed exercise's heads (reference.multi_headed_self_attention: `num_heads` copies of the given
`SingleHeadAttention`, each of size attention_dim // num_heads, concatenated along the last
dimension), then an output projection W^O = nn.Linear(attention_dim, attention_dim, bias=False),
then rounded to 4 decimals.

The constructor calls `torch.manual_seed(0)` and so does every head, so the heads get the seed
exercise's weights whatever comes before them, and W^O gets the draws that follow the last head:
created before the heads, it would start from the seed itself and get other weights.

Shapes: B is the batch size, T the context length, C the embedding dimension.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from grader.variants import WrongVariant
from reference import multi_headed_self_attention as seed


class MultiHeadedSelfAttention(seed.MultiHeadedSelfAttention):
    """The seed exercise's module, with its nested `SingleHeadAttention`, followed by W^O."""

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super().__init__(embedding_dim, attention_dim, num_heads)  # seeds, then the heads
        self.proj = nn.Linear(attention_dim, attention_dim, bias=False)  # W^O, after the heads

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        # embedded: (B, T, C)
        head_outputs = [head(embedded) for head in self.heads]  # num_heads x (B, T, head_size)
        concatenated = torch.cat(head_outputs, dim=2)  # (B, T, num_heads * head_size)
        projected: torch.Tensor = self.proj(concatenated)  # (B, T, attention_dim)
        return torch.round(projected, decimals=4)


# --- Known mistakes -------------------------------------------------------------------------
# The seed exercise's mistakes inside the heads, or in the rounding, are this exercise's too:
# they are the seed's variants with the projection added after the heads, and keep their
# messages. (Its other mistakes change the heads' shape, so the projection would not run.)

_SEED_MISTAKES = (
    "missing-scaling",
    "no-causal-mask",
    "mask-inverted",
    "softmax-over-queries",
    "rounded-to-2-decimals",
    "rounded-to-3-decimals",
)


def _projected(mistake: WrongVariant) -> WrongVariant:
    """The seed exercise's mistake, followed by this exercise's output projection."""
    assert isinstance(mistake.entry, type)
    bases = (seed.WithOutputProjection, mistake.entry)
    return dataclasses.replace(mistake, entry=type(f"{mistake.entry.__name__}Projected", bases, {}))


class _ProjectionWithBias(seed.WithOutputProjection):
    bias = True


class _ProjectionBeforeHeads(seed.WithOutputProjection):
    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super().__init__(embedding_dim, attention_dim, num_heads)
        # Created first, W^O gets the first draws after the seed. The heads re-seed the
        # generator, so theirs are the same either way: re-seeding here is creating W^O first.
        torch.manual_seed(0)
        self.proj = nn.Linear(attention_dim, attention_dim, bias=False)


VARIANTS = (
    *(_projected(mistake) for mistake in seed.VARIANTS if mistake.code in _SEED_MISTAKES),
    WrongVariant(
        code="projection-with-bias",
        message="Your output matches an output projection with a bias: create it without one, "
        "nn.Linear(attention_dim, attention_dim, bias=False).",
        entry=_ProjectionWithBias,
    ),
    WrongVariant(
        code="projection-before-heads",
        message="Your output matches the output projection created before the heads: under "
        "torch.manual_seed(0), layers get their weights in the order they are created, so "
        "create the heads first and the nn.Linear after them, as the starter says.",
        entry=_ProjectionBeforeHeads,
    ),
    WrongVariant(
        code="no-output-projection",
        message="Your output matches the concatenated heads without the output projection: "
        "that is the `multi-headed-self-attention` exercise. This one passes the concatenation "
        "through nn.Linear(attention_dim, attention_dim, bias=False), created after the heads, "
        "before rounding.",
        entry=seed.MultiHeadedSelfAttention,
    ),
)

# The heads are the seed exercise's, and so is the mistake of creating their layers in another
# order (W^O's weights don't change with it: the heads draw as many numbers in any order).
WEIGHT_PROBE = seed.WEIGHT_PROBE
