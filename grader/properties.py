"""The properties an exercise may ask of a submission, whatever its numbers: one registry.

A property is probed and judged the same way for every exercise: the plan (`grader.plan`) adds a
probe call to a visible test, the same call with part of its first input redrawn; the checks
(`grader.property_checks`) compare the probe's output with the test's own main call. Each entry
of `PROPERTIES` says which part a probe redraws, how the two outputs are judged, and what the
student is told when the property does not hold: adding a property is a name
(`grader.spec.Property`, what exercise.toml may list) and an entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grader.compare import agreement
from grader.spec import Property

# The part of the first input a probe redraws, from that input's shape; None where the shape
# leaves nothing to judge by (one token, one sample).
Redraw = Callable[[tuple[int, ...]], tuple[int | slice, ...] | None]
# None when the property holds, else the index (along the judged axis) of the first output that
# moved.
Judge = Callable[[np.ndarray, np.ndarray], int | None]


@dataclass(frozen=True)
class PropertyDefinition:
    redraw: Redraw  # how it is probed
    judge: Judge  # how the probe's output is judged against the main call's
    failure: str  # what was seen where it does not hold, with the {index} that moved and {test}
    # The generic advice that follows the failure, left out where a diagnosed mistake already
    # explains it (`grader.explained_properties`): advice to mask above the diagonal contradicts
    # a student who does, and whose softmax runs over the wrong axis.
    hint: str


def _last_token(shape: tuple[int, ...]) -> tuple[int | slice, ...] | None:
    return (slice(None), shape[1] - 1) if len(shape) >= 2 and shape[1] >= 2 else None


def _first_sample(shape: tuple[int, ...]) -> tuple[int | slice, ...] | None:
    return (0,) if len(shape) >= 2 and shape[0] >= 2 else None


def _causal(main: np.ndarray, probed: np.ndarray) -> int | None:
    """The last token was redrawn: outputs at every earlier position must stay put."""
    return _first_moved(main[:, :-1], probed[:, :-1], axis=1)


def _batch_independent(main: np.ndarray, probed: np.ndarray) -> int | None:
    """Sample 0 was redrawn: every other sample's output must stay put."""
    first = _first_moved(main[1:], probed[1:], axis=0)
    return None if first is None else first + 1


def _first_moved(main: np.ndarray, probed: np.ndarray, axis: int) -> int | None:
    """The first index along `axis` where any output disagrees to 4 decimals, or None: one
    elementwise pass over the whole arrays, reduced over every other axis."""
    disagree = ~agreement(main, probed)
    moved = disagree.any(axis=tuple(other for other in range(disagree.ndim) if other != axis))
    return int(np.argmax(moved)) if moved.any() else None


PROPERTIES: dict[Property, PropertyDefinition] = {
    Property.CAUSAL: PropertyDefinition(
        redraw=_last_token,
        judge=_causal,
        failure="changing the last token changed the output at position {index} in test {test!r}",
        hint="a position must attend only to itself and earlier ones (mask the scores above "
        "the diagonal with -inf before the softmax)",
    ),
    Property.BATCH_INDEPENDENT: PropertyDefinition(
        redraw=_first_sample,
        judge=_batch_independent,
        failure="changing sample 0 changed the output of sample {index} in test {test!r}",
        hint="samples of a batch must not mix (check the dimension of your softmax, sums and "
        "concatenations)",
    ),
}
