"""What the demo course's wrong solutions that no known mistake describes do (app.demo.data): a
behaviour (grader.report.Behaviour) of a few kinds, as the grader would describe them on the
exercise's visible tests, so its dashboard shows groups for staff to name.

Values are drawn from the kind and the exercise: the same every time, alike for every student
whose solution behaves so.
"""

from __future__ import annotations

import random
from enum import StrEnum

from grader.behaviour import ALL_VISIBLE_PASS, behaviour_key
from grader.report import Behaviour, OutputExcerpt
from grader.spec import Exercise, Property, Visibility

_EXCERPT_VALUES = 6


class Unexplained(StrEnum):
    """How a wrong solution no known mistake describes goes wrong."""

    EDGE = "edge"  # right on every visible test: only hidden tests catch it
    SCALED = "scaled"  # the reference's output times a constant
    BATCH_MIXED = "batch-mixed"  # the items of a batch leak into each other
    CRASH = "crash"  # raises on the tests it fails


# As grader.behaviour words them.
_FACTS = {
    Unexplained.EDGE: [ALL_VISIBLE_PASS],
    Unexplained.SCALED: ["{output}: is the reference's scaled by 0.5"],
    Unexplained.BATCH_MIXED: ["{output}: matches only at the first index of axis 0"],
    Unexplained.CRASH: ["raises RuntimeError"],
}


def behaviour_of(
    exercise: Exercise, kind: Unexplained, failed: frozenset[str], broken: frozenset[Property]
) -> Behaviour:
    output = exercise.spec.outputs[0]
    facts = [fact.format(output=output) for fact in _FACTS[kind]]
    failing = [
        test.name
        for test in exercise.spec.tests
        if test.name in failed and test.visibility is Visibility.VISIBLE
    ]
    properties = sorted(prop.value for prop in broken)
    return Behaviour(
        key=behaviour_key(facts, failing, properties),
        facts=facts,
        failing_tests=failing,
        broken_properties=properties,
        excerpts=_excerpts(exercise, kind, failing[:1], output),
    )


def _excerpts(
    exercise: Exercise, kind: Unexplained, tests: list[str], output: str
) -> list[OutputExcerpt]:
    if kind is Unexplained.CRASH:  # no output to show
        return []
    rng = random.Random(f"{exercise.spec.slug}:{kind}")
    expected = [round(rng.gauss(0, 1), 4) for _ in range(_EXCERPT_VALUES)]
    if kind is Unexplained.SCALED:
        actual = [round(value * 0.5, 4) for value in expected]
    else:
        actual = [round(value + rng.gauss(0, 0.3), 4) for value in expected]
    first = [1, 0] if kind is Unexplained.BATCH_MIXED else [0, 0]  # the second item's
    return [
        OutputExcerpt(test=test, output=output, index=first, expected=expected, actual=actual)
        for test in tests
    ]
