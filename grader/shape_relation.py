"""How an output's shape differs from the reference's, said once for several visible tests and
in their own terms: "the last two axes are swapped", "the last axis is `attention_dim //
num_heads` where `attention_dim` is expected".

A relation is said only where it holds on every test given: a reordering of the expected axes
that gives each returned shape, or sizes that one of the constructor's arguments (or the
quotient or product of two) equals on every test. Each test's shape is already in its row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations

# Axes of the reference's output beyond this many are not searched for a reordering (5! = 120
# candidates at most: the reference's shape, trusted, bounds the search, never the submission's).
_MAX_PERMUTED_AXES = 5


@dataclass(frozen=True)
class ShapePair:
    """One test's output shape, the expected one, and the test's constructor arguments."""

    init: Mapping[str, object]
    got: tuple[int, ...]
    want: tuple[int, ...]


def shape_relation(shapes: Sequence[ShapePair], *, named_only: bool) -> str | None:
    """How the returned shapes differ from the expected, the same way on every test. With
    `named_only` (some tests' shapes are right), only a relation that names the difference
    (a reordering, or sizes in the constructor's terms) is said; else None."""
    order = _permutation(shapes)
    if order is not None:
        return _reordered(order)
    ranks = {(len(pair.got), len(pair.want)) for pair in shapes}
    if any(got != want for got, want in ranks):
        if named_only or len(ranks) != 1:
            return None
        got_rank, want_rank = ranks.pop()
        return f"it has {got_rank} axes where {want_rank} are expected"
    differences = [_axis_difference(shapes, axis) for axis in range(len(shapes[0].want))]
    said = [difference for difference in differences if difference is not None]
    if not said or (named_only and not all(named for _, named in said)):
        return None
    return "; ".join(text for text, _ in said)


def _reordered(order: tuple[int, ...]) -> str:
    moved = [axis for axis, source in enumerate(order) if axis != source]
    if len(moved) != 2:
        return f"its axes are the expected ones in the order {order}"
    rank = len(order)
    if moved == [rank - 2, rank - 1]:
        return "the last two axes are swapped"
    return f"axes {moved[0]} and {moved[1]} are swapped"


def _permutation(shapes: Sequence[ShapePair]) -> tuple[int, ...] | None:
    """A reordering of the expected axes that gives the returned shape on every test."""
    rank = len(shapes[0].want)
    if rank > _MAX_PERMUTED_AXES or any(len(pair.got) != rank for pair in shapes):
        return None
    fitting = [
        order
        for order in permutations(range(rank))
        if order != tuple(range(rank))
        and all(pair.got == tuple(pair.want[source] for source in order) for pair in shapes)
    ]
    # Axes of one size can trade places unseen: of the orders that fit, the one moving fewest.
    return min(fitting, key=lambda order: sum(a != b for a, b in enumerate(order)), default=None)


def _axis_difference(shapes: Sequence[ShapePair], axis: int) -> tuple[str, bool] | None:
    """What one axis is where it differs on some test, and whether that is in named terms."""
    if all(pair.got[axis] == pair.want[axis] for pair in shapes):
        return None
    where = "the last axis" if axis == len(shapes[0].want) - 1 else f"axis {axis}"
    got = _term(shapes, lambda pair: pair.got[axis])
    want = _term(shapes, lambda pair: pair.want[axis])
    if got is None or want is None:
        return f"{where} has the wrong size", False
    return f"{where} is {got} where {want} is expected", True


def _term(shapes: Sequence[ShapePair], size_of: Callable[[ShapePair], int]) -> str | None:
    """The constructor's argument (or the quotient or product of two) that equals the size on
    every test, as `attention_dim // num_heads`; None where none does."""
    named = [(_terms(pair.init), size_of(pair)) for pair in shapes]
    return next(
        (f"`{term}`" for term in named[0][0] if all(terms.get(term) == n for terms, n in named)),
        None,
    )


def _terms(init: Mapping[str, object]) -> dict[str, int]:
    """The sizes a test's constructor arguments name: each one, then each quotient and product
    of two."""
    sizes = {name: value for name, value in init.items() if type(value) is int and value > 0}
    terms = dict(sizes)
    for first, one in sizes.items():
        for second, other in sizes.items():
            if first != second and one % other == 0:
                terms[f"{first} // {second}"] = one // other
    for first, one in sizes.items():
        for second, other in sizes.items():
            if first < second:
                terms[f"{first} * {second}"] = one * other
    return terms
