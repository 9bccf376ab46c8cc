"""The properties a known mistake breaks, and the property failures a diagnosis explains.

A known mistake can break a property by itself: a softmax over the queries mixes later tokens
into earlier outputs, so the causal property fails too. Its generic hint ("mask the scores above
the diagonal") would then contradict the diagnosis of a student who masks already. So, at plan
build, each variant's outputs on the property probes are judged as a submission's are
(`broken_properties`); at grading, a property that fails where a diagnosed mistake breaks it
says it follows from that mistake, in place of its hint (`explained_by`). It still fails.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from grader.contract import Call, CallOutcome, OutputValue
from grader.plan import KnownMistake, TestPlan
from grader.property_checks import check_properties
from grader.report import Finding, PropertyStatus
from grader.spec import Property


def broken_properties(
    wanted: Sequence[Property],
    tests: Sequence[TestPlan],
    outputs: Mapping[str, tuple[OutputValue, ...] | None],
    run: Callable[[Call], tuple[OutputValue, ...] | None],
) -> tuple[Property, ...]:
    """The properties of `wanted` that a variant breaks: its `outputs` by visible test name,
    and `run` to make it answer a probe's call."""
    judged = [test for test in tests if outputs.get(test.spec.name) is not None]
    outcomes = {test.call.id: CallOutcome(test.call.id, outputs[test.spec.name]) for test in judged}
    for test in judged:
        for probe in test.probes:
            if probe.kind in wanted:
                outcomes[probe.call.id] = CallOutcome(probe.call.id, run(probe.call))
    checks = check_properties(wanted, judged, outcomes)
    return tuple(Property(check.name) for check in checks if check.status is PropertyStatus.FAILED)


def explained_by(
    diagnosis: Sequence[Finding], mistakes: Sequence[KnownMistake]
) -> dict[Property, str]:
    """The properties whose failure a finding of `diagnosis` explains, each with the first such
    finding's code. A code names every variant written with it: one that breaks the property
    explains it."""
    codes = {finding.code for finding in diagnosis}
    explained: dict[Property, str] = {}
    for mistake in mistakes:
        if all(code in codes for code, _ in mistake.findings):  # a pair: both named
            for prop in mistake.breaks:
                explained.setdefault(prop, mistake.code)
    return explained
