"""How one wrong output differs from the reference's, in plain words (`grader.behaviour`).

The facts are coarse on purpose: two students with the same bug must get the same ones, so a
fact names a relation (a scale, a permutation, a transpose, a region that differs), never the
values themselves; scales and shifts are rounded to two significant digits.

The output comes from a hostile process. Its type, dtype and shape are judged from their
descriptions; its values only when its array has exactly the reference's shape, and then in a
fixed number of vectorised passes, so the work is bounded by the trusted output's size.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np

from grader.compare import agreement
from grader.contract import OutputValue, Scalar

# An output holds a relation to the reference's when each value is within this many units of
# the test's last decimal of what the relation makes of the reference's (rounding both may put
# them one unit apart); a scale or a shift, estimated from the values, may also be off by this
# share of each value.
_UNITS = 2
_RELATIVE = 1e-3
# A type's description is the child's text: shown in plain characters, this long at most.
_LABEL_LENGTH = 40
# Beyond this many axes, a shape is told by its number of axes alone.
_MAX_AXES = 8
TOO_LARGE = "differs in values too many to describe"
# Where values differ in this share or more, and in no region, they differ everywhere: values
# drawn at random agree by chance here and there.
_EVERYWHERE = 0.9
# How constructors name the number of heads: num_heads, n_head, nhead, heads.
_HEADS = re.compile(r"^(num_|n_|n)?heads?$")
# The fixed projection a slice is fingerprinted with to find a permutation (`_permutation`).
_PROJECTION_SEED = 28


def output_facts(
    actual: OutputValue,
    expected: OutputValue,
    decimals: int,
    init: Mapping[str, Scalar],
    describe_values: bool = True,
) -> list[str]:
    """What a failing `actual` does against the reference's `expected`, on a test whose
    constructor arguments are `init`: they name sizes ("axis 2 is multiplied by num_heads") and
    the number of heads, whose slices of the last axis are told apart. Its values are described
    where `describe_values` (the caller's bound on its work)."""
    sizes = {
        value: name
        for name, value in sorted(init.items(), reverse=True)  # the first name of a size wins
        if type(value) is int and value > 1
    }
    described = _description_fact(actual, expected, sizes)
    if described is not None:
        return [described]
    assert expected.array is not None  # the reference's output always carries its array
    if actual.array is None or actual.array.shape != expected.array.shape:
        return ["could not be read back"]
    if not describe_values:
        return [TOO_LARGE]
    heads = next(
        (value for name, value in init.items() if _HEADS.match(name) and type(value) is int), None
    )
    with np.errstate(all="ignore"):
        got, want = actual.array.astype(np.float64), expected.array.astype(np.float64)
        return value_facts(got, want, decimals, heads)


def _description_fact(
    actual: OutputValue, expected: OutputValue, sizes: dict[int, str]
) -> str | None:
    if actual.type_name == "NoneType":
        return "returns None"
    if actual.type_name != expected.type_name:
        return f"is a {plain_label(actual.type_name)}, not a {expected.type_name}"
    if actual.shape != expected.shape:
        return shape_fact(actual.shape or (), expected.shape or (), sizes)
    if actual.dtype != expected.dtype:
        return f"has dtype {plain_label(actual.dtype or '')}, not {expected.dtype}"
    return None


def plain_label(text: str) -> str:
    """A name the submission chose, in plain characters and short: a type or an error class."""
    return re.sub(r"[^A-Za-z0-9_. ]", "?", text[:_LABEL_LENGTH])


def shape_fact(got: tuple[int, ...], want: tuple[int, ...], sizes: dict[int, str]) -> str:
    """How a wrong shape relates to the reference's."""
    if len(got) > _MAX_AXES or len(got) != len(want):
        if [size for size in got if size != 1] == [size for size in want if size != 1]:
            return "has extra or missing axes of size 1"
        return f"has {len(got)} axes, not {len(want)}"
    differing = [axis for axis, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    if len(got) >= 2 and got[:-2] == want[:-2] and got[-2:] == want[:-3:-1]:
        return "has its last two axes transposed"
    if sorted(got) == sorted(want):
        return "has the reference's sizes in another order of axes"
    if len(differing) > 1:
        return f"differs in size along axes {', '.join(map(str, differing))}"
    axis = differing[0]
    return f"axis {axis} {_size_relation(got[axis], want[axis], sizes)}"


def _size_relation(got: int, want: int, sizes: dict[int, str]) -> str:
    if want and got and got % want == 0:
        return f"is multiplied by {sizes.get(got // want, got // want)}"
    if got and want % got == 0:
        return f"is divided by {sizes.get(want // got, want // got)}"
    return "has another size"


def value_facts(
    got: np.ndarray, want: np.ndarray, decimals: int, heads: int | None = None
) -> list[str]:
    """Facts about two float64 arrays of one shape: the non-finite values the reference has
    not, then the relation to the reference's values if one holds, else where they differ."""
    facts = []
    if (np.isnan(got) & ~np.isnan(want)).any():
        facts.append("contains NaN where the reference's has numbers")
    if (np.isinf(got) & ~np.isinf(want)).any():
        facts.append("contains infinite values where the reference's has finite ones")
    if not facts:
        relation = _relation(got, want, decimals, heads)
        if relation is not None:
            return [relation]
    return facts + region_facts(~agreement(got, want, decimals), heads)


def _close(got: np.ndarray, target: np.ndarray, decimals: int, relative: float = 0.0) -> bool:
    tolerance = _UNITS * 10.0**-decimals + relative * np.abs(target)
    return bool((np.abs(got - target) <= tolerance).all())


def _relation(got: np.ndarray, want: np.ndarray, decimals: int, heads: int | None) -> str | None:
    """The first relation that holds between the values, each tried in one or two passes."""
    if not got.any():
        return "is all zeros"
    if not np.isfinite(want).all():
        return None
    checks: list[Callable[[], str | None]] = [
        lambda: _rounded(got, want, decimals),
        lambda: _scaled(got, want, decimals),
        lambda: _shifted(got, want, decimals),
        lambda: _transposed(got, want, decimals),
        lambda: _heads_reordered(got, want, decimals, heads),
        *(lambda axis=axis: _reordered(got, want, decimals, axis) for axis in range(got.ndim)),
    ]
    return next((fact for check in checks if (fact := check()) is not None), None)


def _rounded(got: np.ndarray, want: np.ndarray, decimals: int) -> str | None:
    for places in range(decimals - 1, -1, -1):
        if _close(got, np.round(want, places), decimals):
            return f"is the reference's rounded to {places} decimals"
    return None


def _scaled(got: np.ndarray, want: np.ndarray, decimals: int) -> str | None:
    energy = float((want * want).sum())
    if energy == 0:
        return None
    scale = float((got * want).sum()) / energy
    if f"{scale:.2g}" in ("1", "0", "-0") or not _close(got, scale * want, decimals, _RELATIVE):
        return None
    if f"{scale:.2g}" == "-1":
        return "is the reference's negated"
    return f"is the reference's scaled by {scale:.2g}"


def _shifted(got: np.ndarray, want: np.ndarray, decimals: int) -> str | None:
    shift = float((got - want).mean())
    if f"{shift:.2g}" in ("0", "-0") or not _close(got, want + shift, decimals, _RELATIVE):
        return None
    return f"is the reference's shifted by {shift:.2g}"


def _transposed(got: np.ndarray, want: np.ndarray, decimals: int) -> str | None:
    if got.ndim < 2 or got.shape[-1] != got.shape[-2] or got.shape[-1] < 2:
        return None
    if _close(got, np.swapaxes(want, -1, -2), decimals):
        return "is the reference's with its last two axes transposed"
    return None


def _heads_reordered(
    got: np.ndarray, want: np.ndarray, decimals: int, heads: int | None
) -> str | None:
    """The last axis as the heads' outputs side by side, in another order of heads."""
    if heads is None or heads < 2 or got.ndim == 0 or got.shape[-1] % heads:
        return None
    split = (*got.shape[:-1], heads, got.shape[-1] // heads)
    order = _permutation(got.reshape(split), want.reshape(split), decimals, got.ndim - 1)
    if order is None:
        return None
    if (order == np.arange(heads)[::-1]).all():
        return "has its heads in reverse order"
    return f"has its heads in another order ({', '.join(str(head + 1) for head in order)})"


def _reordered(got: np.ndarray, want: np.ndarray, decimals: int, axis: int) -> str | None:
    order = _permutation(got, want, decimals, axis)
    if order is None:
        return None
    if (order == np.arange(len(order))[::-1]).all():
        return f"is the reference's reversed along axis {axis}"
    return f"is the reference's in another order along axis {axis}"


def _permutation(got: np.ndarray, want: np.ndarray, decimals: int, axis: int) -> np.ndarray | None:
    """The order of the reference's slices along `axis` that `got` holds, if not their own: each
    slice is fingerprinted by one projection, the fingerprints matched by rank, and the match
    checked on every value."""
    count = want.shape[axis]
    if count < 2:
        return None
    mine = np.moveaxis(got, axis, 0).reshape(count, -1)
    theirs = np.moveaxis(want, axis, 0).reshape(count, -1)
    projection = np.random.default_rng(_PROJECTION_SEED).standard_normal(mine.shape[1])
    order = np.empty(count, dtype=np.intp)
    order[np.argsort(mine @ projection)] = np.argsort(theirs @ projection)
    if (order == np.arange(count)).all() or not _close(mine, theirs[order], decimals):
        return None
    return order


def region_facts(mismatches: np.ndarray, heads: int | None = None) -> list[str]:
    """Where the values differ: some heads' slices of the last axis, one side of the diagonal,
    the first or last index of an axis; else everywhere, or in some values."""
    if not mismatches.any():
        return []
    facts = _heads_differing(mismatches, heads) + _diagonal_side(mismatches)
    for axis in range(mismatches.ndim):
        facts += _ends_differing(mismatches, axis)
    if facts:
        return facts
    return ["differs everywhere" if mismatches.mean() >= _EVERYWHERE else "differs in some values"]


def _heads_differing(mismatches: np.ndarray, heads: int | None) -> list[str]:
    if heads is None or heads < 2 or mismatches.shape[-1] % heads:
        return []
    split = mismatches.reshape(*mismatches.shape[:-1], heads, mismatches.shape[-1] // heads)
    differing = np.moveaxis(split, -2, 0).reshape(heads, -1).any(axis=1)
    if differing.all():
        return []
    return [f"only heads {_ranges(np.flatnonzero(differing) + 1)} of {heads} differ"]


def _ranges(numbers: np.ndarray) -> str:
    """1, 2, 3, 5 as "1-3, 5"."""
    runs: list[list[int]] = []
    for number in numbers.tolist():
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _diagonal_side(mismatches: np.ndarray) -> list[str]:
    size = mismatches.shape[-1]
    if mismatches.ndim < 2 or mismatches.shape[-2] != size or size < 2:
        return []
    above = np.triu(np.ones((size, size), dtype=bool), k=1)
    if not (mismatches & ~above).any():
        return ["differs only above the diagonal"]
    if not (mismatches & above).any():
        return ["differs only on and below the diagonal"]
    return []


def _ends_differing(mismatches: np.ndarray, axis: int) -> list[str]:
    count = mismatches.shape[axis]
    if count < 2:
        return []
    differing = np.moveaxis(mismatches, axis, 0).reshape(count, -1).any(axis=1)
    if differing.all():
        return []
    patterns = {  # of two indices, "the first" is "every index but the last": said once
        "differs only at the first index": [0],
        "differs only at the last index": [count - 1],
        "matches only at the first index": list(range(1, count)),
        "matches only at the last index": list(range(count - 1)),
    }
    where = np.flatnonzero(differing).tolist()
    named = next((name for name, indices in patterns.items() if where == indices), None)
    return [] if named is None else [f"{named} of axis {axis}"]
