"""Property checks: does the submission behave as attention must, whatever its numbers?

Each property is judged from a probe call (the same test with part of its input redrawn) against
the test's own main call: both are the submission's outputs, so a property can fail even where
the values are wrong for another reason, and say something the comparison can't.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from grader.compare import agree
from grader.plan import ProbeKind, TestPlan
from grader.report import PropertyCheck, PropertyStatus
from grader.sandbox.job import CallOutcome
from grader.spec import Property

# A judge returns None when the property holds, else the index (along the judged axis) of the
# first output that moved.
Judge = Callable[[np.ndarray, np.ndarray], int | None]


def _causal(main: np.ndarray, probed: np.ndarray) -> int | None:
    """The last token was redrawn: outputs at every earlier position must stay put."""
    for position in range(main.shape[1] - 1):
        if not agree(main[:, position], probed[:, position]):
            return position
    return None


def _batch_independent(main: np.ndarray, probed: np.ndarray) -> int | None:
    """Sample 0 was redrawn: every other sample's output must stay put."""
    for sample in range(1, main.shape[0]):
        if not agree(main[sample], probed[sample]):
            return sample
    return None


_JUDGES: dict[Property, tuple[ProbeKind, Judge, str]] = {
    Property.CAUSAL: (
        ProbeKind.CAUSAL,
        _causal,
        "changing the last token changed the output at position {index} in test {test!r}: "
        "a position must attend only to itself and earlier ones (mask the scores above the "
        "diagonal with -inf before the softmax)",
    ),
    Property.BATCH_INDEPENDENT: (
        ProbeKind.BATCH_INDEPENDENT,
        _batch_independent,
        "changing sample 0 changed the output of sample {index} in test {test!r}: samples of a "
        "batch must not mix (check the dimension of your softmax, sums and concatenations)",
    ),
}


def check_properties(
    wanted: Sequence[Property], tests: Sequence[TestPlan], outcomes: Mapping[str, CallOutcome]
) -> list[PropertyCheck]:
    return [_check(prop, tests, outcomes) for prop in wanted]


def _check(
    prop: Property, tests: Sequence[TestPlan], outcomes: Mapping[str, CallOutcome]
) -> PropertyCheck:
    kind, judge, failure = _JUDGES[prop]
    judged = 0
    for test in tests:
        for probe in test.probes:
            if probe.kind is not kind:
                continue
            pair = _first_arrays(outcomes.get(test.call.id), outcomes.get(probe.call.id))
            if pair is None:
                continue
            judged += 1
            index = judge(*pair)
            if index is not None:
                message = failure.format(index=index, test=test.spec.name)
                return PropertyCheck(name=prop.value, status=PropertyStatus.FAILED, message=message)
    if judged == 0:
        return PropertyCheck(
            name=prop.value,
            status=PropertyStatus.SKIPPED,
            message="not checked: no visible test produced an output of the right shape",
        )
    return PropertyCheck(
        name=prop.value, status=PropertyStatus.PASSED, message=f"holds on {judged} visible tests"
    )


def _first_arrays(
    main: CallOutcome | None, probed: CallOutcome | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The first output of both calls, when both returned arrays of one shape with two axes."""
    if main is None or probed is None or not main.outputs or not probed.outputs:
        return None
    first, second = main.outputs[0].array, probed.outputs[0].array
    if first is None or second is None or first.shape != second.shape or first.ndim < 2:
        return None
    return first, second
