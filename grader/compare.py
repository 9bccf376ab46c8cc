"""Compare a returned value with the expected array "to 4 decimal places".

Checks run in a fixed order, each with its own message: type, shape, dtype, non-finite values,
then values. Two values agree when, after rounding both to 4 decimals, they differ by at most one
unit in the 4th decimal: floating-point reordering can move a value across a rounding boundary,
and a correct solution must never fail because of that.

The values come from a hostile process, so this trusted one bounds its own work: shape is checked
before any per-element work, arrays of two shapes are never broadcast, and every check is one
vectorised pass, so a comparison costs what the expected (trusted) output's size allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from grader.contract import OutputValue

# The product's promise: outputs agree to 4 decimal places, unless an exercise says otherwise
# for one test or one output (`grader.test_calls.output_decimals`).
DECIMALS = 4
_TOLERANCE_UNITS = 1


class Check(StrEnum):
    """What a comparison found, in the order the checks run."""

    MATCH = "match"
    TYPE = "type"
    SHAPE = "shape"
    DTYPE = "dtype"
    NON_FINITE = "non_finite"
    VALUES = "values"


@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]
    expected: float
    actual: float


@dataclass(frozen=True)
class Comparison:
    check: Check
    message: str
    max_abs_error: float | None = None
    mismatch_count: int = 0
    first_mismatch: Mismatch | None = None

    @property
    def passed(self) -> bool:
        return self.check is Check.MATCH


def compare(
    name: str, actual: OutputValue, expected: OutputValue, decimals: int = DECIMALS
) -> Comparison:
    """Compare the value the submission returned with the reference's, both as described by the
    sandbox's call executor (the reference's always carries its array)."""
    for check in (_check_type, _check_shape, _check_dtype):
        failure = check(name, actual, expected)
        if failure is not None:
            return failure
    assert expected.array is not None
    if actual.array is None:  # right type, shape and dtype, but too large to have been sent
        return Comparison(Check.SHAPE, f"`{name}` could not be read back")
    return compare_arrays(name, actual.array, expected.array, decimals)


def _check_type(name: str, actual: OutputValue, expected: OutputValue) -> Comparison | None:
    if actual.type_name == expected.type_name:
        return None
    wanted = "a torch.Tensor" if expected.type_name == "Tensor" else "a numpy.ndarray"
    return Comparison(Check.TYPE, f"`{name}` should be {wanted}; got {actual.type_name}")


def _check_shape(name: str, actual: OutputValue, expected: OutputValue) -> Comparison | None:
    if actual.shape == expected.shape:
        return None
    return Comparison(
        Check.SHAPE,
        f"`{name}` has shape {_shape(actual.shape)}; expected {_shape(expected.shape)}",
    )


def _check_dtype(name: str, actual: OutputValue, expected: OutputValue) -> Comparison | None:
    if actual.dtype == expected.dtype:
        return None
    return Comparison(Check.DTYPE, f"`{name}` has dtype {actual.dtype}; expected {expected.dtype}")


def _shape(shape: tuple[int, ...] | None) -> str:
    return "(" + ", ".join(str(size) for size in shape or ()) + ")"


def compare_arrays(
    name: str, actual: np.ndarray, expected: np.ndarray, decimals: int = DECIMALS
) -> Comparison:
    """Values, once the shapes are known to be equal: arrays of two shapes are a shape failure,
    never broadcast (a (1, n) against an (n, 1) would make n * n values)."""
    if actual.shape != expected.shape:
        return Comparison(
            Check.SHAPE,
            f"`{name}` has shape {_shape(actual.shape)}; expected {_shape(expected.shape)}",
        )
    with np.errstate(all="ignore"):  # overflow and inf - inf are judged below, not warned about
        return _compare_values(name, actual, expected, decimals)


def _compare_values(
    name: str, actual: np.ndarray, expected: np.ndarray, decimals: int
) -> Comparison:
    got = actual.astype(np.float64)
    want = expected.astype(np.float64)
    unexpected = ~np.isfinite(got) & np.isfinite(want)
    if unexpected.any():
        return _non_finite(name, got, want, unexpected, expected.dtype)
    bad = ~_agreement(got, want, decimals)
    errors = np.abs(got - want)[np.isfinite(got) & np.isfinite(want)]
    max_abs_error = shortest(float(errors.max()), expected.dtype) if errors.size else 0.0
    count = int(bad.sum())
    if count == 0:
        return Comparison(Check.MATCH, f"`{name}` matches to {decimals} decimals", max_abs_error)
    # The first mismatch is the report's own field, which every renderer shows: not repeated here.
    return Comparison(
        Check.VALUES,
        f"`{name}` differs in {count} of {bad.size} values (max abs error {max_abs_error:.3g})",
        max_abs_error,
        count,
        _first(bad, got, want, expected.dtype),
    )


def shortest(value: float, dtype: np.dtype) -> float:
    """`value` as the shortest decimal that reads back as the same number of `dtype`: a float32
    0.0571 stays 0.0571, not the 0.057100001722574234 it is as a float64. Floats of other
    dtypes are float64s."""
    kind = dtype.type if np.issubdtype(dtype, np.floating) else np.float64
    return float(np.format_float_positional(kind(value), unique=True))


def _agreement(got: np.ndarray, want: np.ndarray, decimals: int = DECIMALS) -> np.ndarray:
    """Elementwise agreement of two float64 arrays of one shape: within one unit of the last
    decimal after rounding where both are finite, else the same special value. Written as "not
    differs" so that two finite values whose scaled difference overflows to NaN still agree, as
    they always have."""
    units = 10.0**decimals
    both_finite = np.isfinite(got) & np.isfinite(want)
    differs_rounded = np.abs(np.round(got * units) - np.round(want * units)) > _TOLERANCE_UNITS
    agreeing: np.ndarray = np.where(both_finite, ~differs_rounded, _same_special(got, want))
    return agreeing


def _same_special(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Where the expected value is itself ±inf or NaN, the same value counts as agreement."""
    same: np.ndarray = (got == want) | (np.isnan(got) & np.isnan(want))
    return same


def _non_finite(
    name: str, got: np.ndarray, want: np.ndarray, where: np.ndarray, dtype: np.dtype
) -> Comparison:
    nans = int((np.isnan(got) & where).sum())
    infs = int((np.isinf(got) & where).sum())
    return Comparison(
        Check.NON_FINITE,
        f"`{name}` contains {nans} NaN and {infs} infinite values where finite ones were "
        "expected (a row that is masked everywhere, or a division by zero, gives NaN)",
        None,
        int(where.sum()),
        _first(where, got, want, dtype),
    )


def _first(where: np.ndarray, got: np.ndarray, want: np.ndarray, dtype: np.dtype) -> Mismatch:
    """The first index (in C order) where `where` holds; it holds somewhere."""
    # argmax stops at the first True; argwhere would list every mismatch first.
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(where)), where.shape))
    return Mismatch(index, shortest(want[index], dtype), shortest(got[index], dtype))


def agreement(first: np.ndarray, second: np.ndarray, decimals: int = DECIMALS) -> np.ndarray:
    """Elementwise: whether each value of `first` agrees with `second`'s at the same index, as
    `compare_arrays` judges it (one pass, for property checks that locate what moved). The arrays
    must have one shape: they are never broadcast."""
    if first.shape != second.shape:
        raise ValueError(f"arrays of shapes {first.shape} and {second.shape} are not compared")
    with np.errstate(all="ignore"):
        return _agreement(first.astype(np.float64), second.astype(np.float64), decimals)


def agree(first: np.ndarray, second: np.ndarray) -> bool:
    """Whether two arrays of one shape agree to 4 decimals, every element of them."""
    return first.shape == second.shape and bool(agreement(first, second).all())


def compare_outputs(
    names: tuple[str, ...],
    expected: tuple[OutputValue, ...],
    outputs: tuple[OutputValue, ...],
    decimals: tuple[int, ...] | None = None,
) -> list[Comparison]:
    """Each named output against the reference's, to its decimals (4 by default); one TYPE
    failure where the number of values returned is not the number expected."""
    if len(outputs) != len(expected):
        got = outputs[0].type_name if outputs else "nothing"
        wanted = f"a tuple ({', '.join(names)})" if len(names) > 1 else "one value"
        return [Comparison(Check.TYPE, f"should return {wanted}; got {got}")]
    tolerances = decimals or (DECIMALS,) * len(names)
    pairs = zip(names, outputs, expected, tolerances, strict=True)
    return [compare(name, got, want, places) for name, got, want, places in pairs]
