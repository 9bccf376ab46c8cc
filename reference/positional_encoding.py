"""Token embeddings plus the sinusoidal positions of "Attention Is All You Need" (section 3.5).

For position pos and feature pair i (features 2i and 2i + 1, i = 0 .. d_model/2 - 1):

    PE[pos, 2i]     = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))

The sines and cosines are interleaved, as in the paper, not laid out as two halves. Positions
count from 0. As in section 3.4 of the paper, the token embeddings are multiplied by
sqrt(d_model) before the positions are added.

Shapes: B is the batch size, T the sequence length (T <= max_len).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from grader.variants import WrongVariant

BASE = 10000.0


def sinusoidal_positions(seq_len: int, d_model: int) -> torch.Tensor:
    """The (seq_len, d_model) table of sinusoidal positions, float32."""
    sines, cosines = _sines_and_cosines(torch.arange(seq_len, dtype=torch.float64), d_model)
    table = torch.stack((sines, cosines), dim=-1)  # (T, d_model/2, 2): pair i is [sin, cos]
    return table.reshape(seq_len, d_model).to(torch.float32)  # (T, d_model), interleaved


def _sines_and_cosines(
    positions: torch.Tensor, d_model: int, exponent_step: int = 2
) -> tuple[torch.Tensor, torch.Tensor]:
    """sin and cos of pos / BASE^(step * i / d_model) for each pair i: each (T, d_model/2)."""
    pair = torch.arange(d_model // 2, dtype=torch.float64)  # i
    angles = positions[:, None] / BASE ** (exponent_step * pair / d_model)  # (T, d_model/2)
    return torch.sin(angles), torch.cos(angles)


class TokenAndPositionEmbedding(nn.Module):
    positions = staticmethod(sinusoidal_positions)
    scale_embeddings = True
    position_table: torch.Tensor

    def __init__(self, vocab_size: int, d_model: int, max_len: int) -> None:
        super().__init__()
        self.d_model = d_model
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        # A constant, not a parameter: a buffer follows the module to its device and dtype.
        self.register_buffer("position_table", self.positions(max_len, d_model), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # ids: (B, T) int64
        embedded: torch.Tensor = self.token_embedding(ids)  # (B, T, d_model)
        if self.scale_embeddings:
            embedded = embedded * math.sqrt(self.d_model)
        return embedded + self.position_table[: ids.shape[-1]]  # (T, d_model) broadcast over B


# --- Known mistakes -------------------------------------------------------------------------


def _concatenated_halves(seq_len: int, d_model: int) -> torch.Tensor:
    sines, cosines = _sines_and_cosines(torch.arange(seq_len, dtype=torch.float64), d_model)
    return torch.cat((sines, cosines), dim=-1).to(torch.float32)  # every sine, then every cosine


def _exponent_i_over_d(seq_len: int, d_model: int) -> torch.Tensor:
    positions = torch.arange(seq_len, dtype=torch.float64)
    sines, cosines = _sines_and_cosines(positions, d_model, exponent_step=1)
    return torch.stack((sines, cosines), dim=-1).reshape(seq_len, d_model).to(torch.float32)


def _positions_from_one(seq_len: int, d_model: int) -> torch.Tensor:
    return sinusoidal_positions(seq_len + 1, d_model)[1:]


class _ConcatenatedHalves(TokenAndPositionEmbedding):
    positions = staticmethod(_concatenated_halves)


class _ExponentIOverD(TokenAndPositionEmbedding):
    positions = staticmethod(_exponent_i_over_d)


class _PositionsFromOne(TokenAndPositionEmbedding):
    positions = staticmethod(_positions_from_one)


class _UnscaledEmbeddings(TokenAndPositionEmbedding):
    scale_embeddings = False


_CONCATENATED_HALVES = (
    "Your positions match a table with every sine first and every cosine after it "
    "(torch.cat([sin, cos], dim=-1)). This exercise interleaves them as the paper does: feature "
    "2i holds the sine of pair i and feature 2i + 1 its cosine (table[:, 0::2] = sin, "
    "table[:, 1::2] = cos)."
)
_EXPONENT_I_OVER_D = (
    "Your positions match frequencies 1 / 10000^(i / d_model) for pair i: the exponent is "
    "2i / d_model, where 2i is the even feature index (torch.arange(0, d_model, 2)), so the "
    "wavelengths grow twice as fast from pair to pair."
)
_POSITIONS_FROM_ONE = (
    "Your positions match a table whose first row is position 1: positions count from 0, so the "
    "first row is sin(0) = 0 and cos(0) = 1 (torch.arange(seq_len), not arange(1, seq_len + 1))."
)

VARIANTS = (
    WrongVariant("concatenated-halves", _CONCATENATED_HALVES, _ConcatenatedHalves),
    WrongVariant(
        "concatenated-halves", _CONCATENATED_HALVES, _concatenated_halves, of="sinusoidal_positions"
    ),
    WrongVariant("exponent-i-over-d", _EXPONENT_I_OVER_D, _ExponentIOverD),
    WrongVariant(
        "exponent-i-over-d", _EXPONENT_I_OVER_D, _exponent_i_over_d, of="sinusoidal_positions"
    ),
    WrongVariant("positions-from-one", _POSITIONS_FROM_ONE, _PositionsFromOne),
    WrongVariant(
        "positions-from-one", _POSITIONS_FROM_ONE, _positions_from_one, of="sinusoidal_positions"
    ),
    WrongVariant(
        "missing-embedding-scale",
        "Your output matches token embeddings added to the positions as they are: multiply the "
        "embeddings by sqrt(d_model) first, as the statement (and section 3.4 of the paper) asks.",
        _UnscaledEmbeddings,
    ),
)
