"""The kinds of input a test passes, as `exercise.toml` writes them (`inputs = [...]`).

Each kind is told by its telling key, so a fault in one is reported for that kind alone:
`shape` (a drawn float tensor), `causal_mask`, `same_as`, `integers` (token ids, class labels),
`keep_prefix` (a boolean padding mask) and `literal` (a value from the statement, as is).
`grader.inputs` draws them from a test's seed.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator
from typing_extensions import TypeAliasType

FloatDtype = Literal["float32", "float64"]
# A literal's values, nested as the tensor's axes are; a scalar is passed as a Python value.
LiteralValue = TypeAliasType("LiteralValue", "bool | int | float | list[LiteralValue]")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RandomTensor(_Strict):
    """A tensor drawn from the test's dedicated generator, times `scale` (logits with a large
    range: the inputs a naive softmax overflows on)."""

    shape: tuple[int, ...]
    dist: Literal["randn", "rand"] = "randn"
    dtype: FloatDtype = "float32"
    scale: float = Field(default=1.0, gt=0)


class CausalMask(_Strict):
    """An additive mask of shape (size, size): 0 on and below the diagonal, -inf above."""

    causal_mask: int = Field(gt=0)
    dtype: FloatDtype = "float32"


class SameAs(_Strict):
    """The very tensor passed as an earlier argument (self-attention's query = key = value)."""

    same_as: int = Field(ge=0)


class IntegerTensor(_Strict):
    """An int64 tensor uniform in [low, high): token ids, class labels. With `ignored`, about
    that fraction of its entries hold `ignore_index` instead (at least one does, and at least
    one does not): the targets a loss must skip."""

    integers: tuple[int, ...] = Field(min_length=1)
    high: int
    low: int = 0
    ignore_index: int | None = None
    ignored: float = Field(default=0.0, ge=0, lt=1)

    @model_validator(mode="after")
    def _check_range(self) -> IntegerTensor:
        if self.high <= self.low:
            raise ValueError(f"high ({self.high}) must be above low ({self.low})")
        if (self.ignore_index is None) != (self.ignored == 0):
            raise ValueError("`ignore_index` and `ignored` go together")
        return self


class KeepPrefix(_Strict):
    """A boolean (batch, tokens) mask, True for each row's first L tokens (L drawn in
    [1, tokens]; the first row keeps all of them): a padded batch's keep mask."""

    keep_prefix: tuple[int, int]


class LiteralInput(_Strict):
    """A value written in the test: a Python scalar passed as is, or a tensor of these values
    (float32 for floats, int64 for integers, bool for booleans, unless `dtype` says)."""

    literal: LiteralValue
    dtype: Literal["float32", "float64", "int64", "bool"] | None = None


_TELLING_KEYS = {
    "causal_mask": "mask",
    "same_as": "same",
    "integers": "integers",
    "keep_prefix": "keep",
    "literal": "literal",
}


def _input_kind(value: object) -> str:
    """Which kind of input a table is, by its telling key."""
    keys = value if isinstance(value, dict) else vars(value)
    return next((kind for key, kind in _TELLING_KEYS.items() if key in keys), "tensor")


InputSpec = Annotated[
    Annotated[RandomTensor, Tag("tensor")]
    | Annotated[CausalMask, Tag("mask")]
    | Annotated[SameAs, Tag("same")]
    | Annotated[IntegerTensor, Tag("integers")]
    | Annotated[KeepPrefix, Tag("keep")]
    | Annotated[LiteralInput, Tag("literal")],
    Discriminator(_input_kind),
]


def shape_of(spec: InputSpec) -> tuple[int, ...] | None:
    """The shape of a drawn input (a float tensor, integers or a keep mask), else None."""
    if isinstance(spec, RandomTensor):
        return spec.shape
    if isinstance(spec, IntegerTensor):
        return spec.integers
    return spec.keep_prefix if isinstance(spec, KeepPrefix) else None


def check_references(inputs: list[InputSpec], where: str) -> None:
    """`same_as` refers to an earlier input of the same call."""
    for position, spec in enumerate(inputs):
        if isinstance(spec, SameAs) and spec.same_as >= position:
            raise ValueError(f"{where}: input {position} refers forward")
