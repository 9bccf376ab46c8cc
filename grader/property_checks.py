"""Property checks: does the submission behave as attention must, whatever its numbers?

Each property (`grader.properties`) is judged from a probe call (the same test with part of its
input redrawn) against the test's own main call: both are the submission's outputs, so a property
can fail even where the values are wrong for another reason, and say something the comparison
can't.

Both outputs come from a hostile process: a pair is judged only when both have exactly the shape
of the reference's output on that test, and then in one vectorised pass, so the work is bounded
by the trusted output's size whatever the submission returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from grader.contract import CallOutcome
from grader.plan import TestPlan
from grader.properties import PROPERTIES
from grader.report import PropertyCheck, PropertyStatus
from grader.spec import Property

UNJUDGED = "no visible test produced an output of the right shape"


def check_properties(
    wanted: Sequence[Property],
    tests: Sequence[TestPlan],
    outcomes: Mapping[str, CallOutcome],
    explained: Mapping[Property, str] | None = None,
) -> list[PropertyCheck]:
    """Each property of `wanted`; one that fails where `explained` names the diagnosed mistake
    that breaks it says so in place of its generic hint (`grader.mistake_properties`)."""
    return [_check(prop, tests, outcomes, (explained or {}).get(prop)) for prop in wanted]


def _check(
    prop: Property,
    tests: Sequence[TestPlan],
    outcomes: Mapping[str, CallOutcome],
    explained_by: str | None,
) -> PropertyCheck:
    definition = PROPERTIES[prop]
    judged = probed = 0
    for test in tests:
        for probe in test.probes:
            if probe.kind is not prop:
                continue
            probed += 1
            pair = _judgeable(test, outcomes.get(test.call.id), outcomes.get(probe.call.id))
            if pair is None:
                continue
            judged += 1
            index = definition.judge(*pair)
            if index is not None:
                seen = definition.failure.format(index=index, test=test.spec.name)
                message = (
                    f"{seen}: {definition.hint}"
                    if explained_by is None
                    else f"{seen}, which follows from the diagnosed mistake ({explained_by}): "
                    "fix that first"
                )
                return PropertyCheck(name=prop.value, status=PropertyStatus.FAILED, message=message)
    if judged == 0:
        return PropertyCheck(
            name=prop.value,
            status=PropertyStatus.SKIPPED,
            message=UNJUDGED,
        )
    return PropertyCheck(
        name=prop.value, status=PropertyStatus.PASSED, message=holds_message(judged, probed)
    )


def holds_message(judged: int, probed: int) -> str:
    """A property probes a few visible tests only (`PROBED_TESTS_PER_KIND`): the message says
    how many it held on of those, never of all the visible tests."""
    tests = "test" if judged == 1 else "tests"
    message = f"holds on the {judged} visible {tests} it was checked on"
    skipped = probed - judged
    if skipped:
        message += f" ({skipped} more returned an output of the wrong shape)"
    return message


def _judgeable(
    test: TestPlan, main: CallOutcome | None, probed: CallOutcome | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The first output of both calls, when both are arrays of exactly the shape the reference
    returns on the test (two axes at least); else the pair is not judged. Checked before any
    per-element work: the submission chooses its outputs' shapes, never the grader's cost."""
    reference = test.expected[0].array if test.expected else None
    first, second = _first_array(main), _first_array(probed)
    if reference is None or reference.ndim < 2 or first is None or second is None:
        return None
    if first.shape != reference.shape or second.shape != reference.shape:
        return None
    return first, second


def _first_array(outcome: CallOutcome | None) -> np.ndarray | None:
    return outcome.outputs[0].array if outcome is not None and outcome.outputs else None
