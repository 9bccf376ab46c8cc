"""What each hidden test did, for staff (`grader.hidden_detail`), from hidden runs built by hand:
the inputs' shapes, the first mismatch, the error, where the run stopped; and none of it in the
report."""

from __future__ import annotations

import dataclasses

import numpy as np
from grader_support import plan

from grader.contract import CallOutcome, Execution, RaisedError, Termination
from grader.hidden_detail import HiddenOutcome, HiddenRunDetail, describe_hidden
from grader.hidden_verdicts import HiddenRun
from grader.judge import judge
from grader.plan import Case, Draw, TestPlan
from grader.report import Report

SECRET_ERROR = "hidden-only words 7f3a"


def hidden_tests() -> list[TestPlan]:
    return [test for test in plan().tests if not test.visible]


def last_sets() -> Draw:
    return {test.spec.name: test.cases[-1] for test in hidden_tests()}


def right(case: Case) -> CallOutcome:
    return CallOutcome(case.call.id, outputs=case.expected, stdout="a print\n", duration_s=0.25)


def shifted(case: Case, at: tuple[int, ...], by: float) -> CallOutcome:
    expected = case.expected[0]
    assert expected.array is not None
    array = expected.array.copy()
    array[at] += by
    wrong = dataclasses.replace(expected, array=array)
    return CallOutcome(case.call.id, outputs=(wrong,))


def every_visible_call_right() -> dict[str, CallOutcome]:
    return {
        test.call.id: CallOutcome(test.call.id, outputs=test.expected)
        for test in plan().tests
        if test.visible
    }


def graded(hidden: Execution | None, draw: Draw) -> tuple[Report, HiddenRunDetail]:
    visible = Execution(Termination.COMPLETED, every_visible_call_right())
    run = None if hidden is None else HiddenRun(draw, hidden)
    report = judge(plan(), visible, run)
    return report, describe_hidden(plan(), run, report)


def test_staff_see_each_hidden_test_s_inputs_first_mismatch_and_error_and_the_report_none() -> None:
    draw = last_sets()
    first, second, *rest = hidden_tests()
    outcomes = {
        first.spec.name: shifted(draw[first.spec.name], (0, 1, 2), 0.5),
        second.spec.name: CallOutcome(
            second.spec.name, None, RaisedError("IndexError", SECRET_ERROR, line=12)
        ),
        **{test.spec.name: right(draw[test.spec.name]) for test in rest},
    }

    report, detail = graded(Execution(Termination.COMPLETED, outcomes), draw)

    assert detail.termination is Termination.COMPLETED
    wrong, raised, *passed = detail.tests
    case = draw[first.spec.name]
    assert wrong.outcome is HiddenOutcome.WRONG_OUTPUT
    assert not wrong.passed
    assert wrong.input_set == len(first.cases)  # the last of its sets, as drawn
    arrays = [arg for arg in case.call.args if isinstance(arg, np.ndarray)]
    assert [(one.shape, one.dtype) for one in wrong.inputs if one.shape] == [
        (list(array.shape), str(array.dtype)) for array in arrays
    ]
    mismatch = wrong.outputs[0].first_mismatch
    assert mismatch is not None
    assert mismatch.index == [0, 1, 2]
    expected = case.expected[0].array
    assert expected is not None
    assert mismatch.expected == round(float(expected[0, 1, 2]), 4)
    assert "first at index [0, 1, 2]" in wrong.summary
    assert raised.outcome is HiddenOutcome.RAISED
    assert raised.error is not None
    assert (raised.error.kind, raised.error.message, raised.error.line) == (
        "IndexError",
        SECRET_ERROR,
        12,
    )
    assert {one.outcome for one in passed} == {HiddenOutcome.PASSED}
    assert all(one.passed and one.stdout == "a print\n" and not one.outputs for one in passed)
    assert passed[0].duration_ms == 250.0
    # The bits agree with the report's, and the report holds nothing else of the hidden run.
    bits = {test.name: test.status.value == "passed" for test in report.tests}
    assert all(bits[one.name] is one.passed for one in detail.tests)
    shown = report.model_dump_json()
    assert SECRET_ERROR not in shown
    assert "a print" not in shown
    assert repr(mismatch.actual) not in shown


def test_a_run_that_timed_out_names_the_test_it_stopped_at_and_those_never_reached() -> None:
    draw = last_sets()
    first, second, *rest = hidden_tests()
    outcomes = {first.spec.name: right(draw[first.spec.name])}
    stopped = Execution(Termination.TIMEOUT, outcomes, interrupted_call=second.spec.name)

    _, detail = graded(stopped, draw)

    kinds = [one.outcome for one in detail.tests]
    assert kinds == [
        HiddenOutcome.PASSED,
        HiddenOutcome.STOPPED,
        *[HiddenOutcome.NOT_RUN] * len(rest),
    ]
    assert "time limit" in detail.tests[1].summary
    assert detail.tests[2].summary == f"not reached: the run stopped at {second.spec.name!r}"
    assert detail.tests[2].inputs  # its inputs were sent, whether or not it ran


def test_a_refused_source_s_hidden_tests_never_ran_and_a_starved_run_says_so() -> None:
    _, refused = graded(None, last_sets())
    starved = Execution(Termination.TIMEOUT, {}, starved=True)
    _, busy = graded(starved, last_sets())

    assert refused.termination is None
    assert {one.outcome for one in refused.tests} == {HiddenOutcome.NOT_RUN}
    assert all(one.input_set is None and "refused" in one.summary for one in refused.tests)
    assert {one.outcome for one in busy.tests} == {HiddenOutcome.NOT_RUN}
    assert all("no CPU" in one.summary for one in busy.tests)
