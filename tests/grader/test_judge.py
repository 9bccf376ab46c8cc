"""Judging an Execution into a report, with executions built by hand (no sandbox)."""

import dataclasses

import numpy as np
import pytest
from grader_support import plan

from grader.contract import (
    CallOutcome,
    Execution,
    OutputValue,
    RaisedError,
    Termination,
    Violation,
)
from grader.hidden_verdicts import HiddenRun
from grader.judge import FEEDBACK_BUDGET_S, internal_error, judge
from grader.plan import Draw, TestPlan, make_job
from grader.reference import Reference, run_trusted
from grader.refusal import refused_test_message
from grader.render import render_text
from grader.report import Report, ReportStatus, TestStatus


def judge_both(execution: Execution, budget_s: float = FEEDBACK_BUDGET_S) -> Report:
    """Judge one execution as both runs: its visible tests' outcomes, and its hidden tests'
    on their first input sets."""
    return judge(plan(), execution, HiddenRun(first_sets(), execution), budget_s)


def first_sets() -> Draw:
    return {test.spec.name: test.cases[0] for test in plan().tests if not test.visible}


def passing(test: TestPlan) -> CallOutcome:
    return CallOutcome(test.call.id, outputs=test.expected, stdout="hello\n")


def every_call_passing() -> dict[str, CallOutcome]:
    outcomes = {test.call.id: passing(test) for test in plan().tests}
    for test in plan().tests:  # probes of a correct submission return the main outputs again
        for probe in test.probes:
            outcomes[probe.call.id] = dataclasses.replace(passing(test), call_id=probe.call.id)
        outcomes |= trains_as_the_reference(test)
    return outcomes


def trains_as_the_reference(test: TestPlan) -> dict[str, CallOutcome]:
    """What a correct submission's gradient pass and scaled inputs return: the reference's."""
    outcomes = {}
    gradients = test.cases[0].gradients
    if gradients is not None:
        outcomes[gradients.call.id] = CallOutcome(
            gradients.call.id, test.expected, gradients=gradients.expected
        )
    for scaled in test.scaled:
        outcomes[scaled.case.call.id] = CallOutcome(scaled.case.call.id, scaled.case.expected)
    return outcomes


def shifted(test: TestPlan, by: float) -> CallOutcome:
    expected = test.expected[0]
    assert expected.array is not None
    wrong = dataclasses.replace(expected, array=expected.array + np.float32(by))
    return CallOutcome(test.call.id, outputs=(wrong,), stdout="secret print\n")


def test_all_outputs_right_is_a_pass_with_full_score() -> None:
    report = judge_both(Execution(Termination.COMPLETED, every_call_passing()))
    assert report.status is ReportStatus.PASSED
    assert report.score == report.max_score == plan().exercise.spec.max_score
    assert {p.status.value for p in report.properties} == {"passed"}


def test_wrong_values_fail_with_the_mismatch_on_visible_tests_only() -> None:
    outcomes = every_call_passing()
    for test in plan().tests:
        outcomes[test.call.id] = shifted(test, 0.01)
    report = judge_both(Execution(Termination.COMPLETED, outcomes))
    assert report.status is ReportStatus.FAILED and report.score == 0
    visible = [t for t in report.tests if t.visibility.value == "visible"]
    hidden = [t for t in report.tests if t.visibility.value == "hidden"]
    assert all(t.first_mismatch is not None and "differs" in t.message for t in visible)
    assert visible[0].stdout == "secret print\n"
    assert all(t.duration_ms is not None for t in visible)
    for result in hidden:
        assert result.duration_ms is None  # time spent could spell out the inputs
        assert result.message == "hidden test: failed"
        assert result.first_mismatch is None and result.max_abs_error is None
        assert result.stdout == "" and result.outputs == []


def test_a_hidden_test_tells_one_bit_whatever_went_wrong() -> None:
    """An error, a wrong value and a run that never got there all read "failed": which one it
    was would be a second bit, chosen by a submission that has read the inputs."""
    hidden = [test for test in plan().tests if not test.visible]
    outcomes = every_call_passing()
    leak = RaisedError("ValueError", "input was tensor([[0.1234, ...]])", line=3)
    outcomes[hidden[0].call.id] = CallOutcome(hidden[0].call.id, outputs=None, error=leak)
    outcomes[hidden[1].call.id] = shifted(hidden[1], 0.01)
    del outcomes[hidden[2].call.id]
    report = judge_both(Execution(Termination.COMPLETED, outcomes))
    results = {t.name: t for t in report.tests}
    for test in hidden[:3]:
        assert results[test.spec.name].status is TestStatus.FAILED
        assert results[test.spec.name].message == "hidden test: failed"
        assert results[test.spec.name].line is None
    assert "0.1234" not in report.model_dump_json()


def test_a_hidden_test_is_judged_on_the_input_set_drawn_for_it() -> None:
    test = next(test for test in plan().tests if not test.visible)
    second = test.cases[1]
    outcomes = {test.call.id: CallOutcome(test.call.id, outputs=second.expected)}
    execution = Execution(Termination.COMPLETED, outcomes)
    for drawn, status in ((second, TestStatus.PASSED), (test.cases[0], TestStatus.FAILED)):
        report = judge(plan(), execution, HiddenRun({test.spec.name: drawn}, execution))
        assert next(t for t in report.tests if t.name == test.spec.name).status is status


def test_a_visible_error_names_type_line_and_message() -> None:
    outcomes = every_call_passing()
    first = plan().tests[0]
    error = RaisedError("TypeError", "empty(): argument 'size' must be tuple of ints", line=12)
    outcomes[first.call.id] = CallOutcome(first.call.id, outputs=None, error=error)
    report = judge_both(Execution(Termination.COMPLETED, outcomes))
    assert report.tests[0].message == (
        "raised TypeError at line 12: empty(): argument 'size' must be tuple of ints"
    )
    assert report.tests[0].line == 12  # for the page to mark it in the editor


def test_a_misfit_names_no_exception_class_of_the_grader() -> None:
    outcomes = every_call_passing()
    first = plan().tests[0]
    misfit = RaisedError("ContractError", "missing parameters heads.0.weight", contract=True)
    outcomes[first.call.id] = CallOutcome(first.call.id, outputs=None, error=misfit)
    report = judge_both(Execution(Termination.COMPLETED, outcomes))
    assert report.tests[0].message == (
        "does not fit the exercise: missing parameters heads.0.weight"
    )


CPU_USED_UP = "used up its 10 s of CPU"  # the sandbox's detail of a CPU time-out


def test_a_timeout_is_said_once_on_its_test_and_the_tests_not_run_only_point_at_it() -> None:
    tests = plan().tests
    outcomes = {tests[0].call.id: passing(tests[0])}
    execution = Execution(
        Termination.TIMEOUT, outcomes, interrupted_call=tests[1].call.id, detail=CPU_USED_UP
    )
    report = judge_both(execution)
    assert report.tests[0].status is TestStatus.PASSED
    assert report.tests[1].status is TestStatus.TIMEOUT
    assert report.tests[1].message == (f"{CPU_USED_UP}; look for a loop that never ends")
    assert report.model_dump_json().count("CPU") == 1  # not "(10 s of CPU) (used up ... CPU)"
    assert report.tests[2].status is TestStatus.TIMEOUT
    assert report.tests[2].message == f"not run: the run stopped at test {tests[1].spec.name!r}"


def test_a_timeout_outside_any_test_is_said_once_by_the_report() -> None:
    execution = Execution(Termination.TIMEOUT, {}, detail=CPU_USED_UP)
    report = judge_both(execution)
    assert report.message.endswith(
        f"The run stopped outside any test: your code {CPU_USED_UP};"
        " look for a loop that never ends"
    )
    assert report.model_dump_json().count("CPU") == 1
    visible = [t for t in report.tests if t.visibility.value == "visible"]
    assert {t.message for t in visible} == {"not run: the run stopped before it"}


def test_a_property_not_checked_says_so_once_in_the_text() -> None:
    """The status says "skipped"; a message that said "not checked:" too read "skipped: not
    checked:" in every renderer."""
    report = judge_both(Execution(Termination.COMPLETED, every_call_passing()), budget_s=0)
    text = render_text(report)
    assert "causal: skipped: judging your outputs took longer than the grader allows" in text
    assert "not checked" not in text


def test_a_visible_run_the_machine_starved_is_the_platform_s_fault() -> None:
    tests = plan().tests
    starved = Execution(Termination.TIMEOUT, {}, interrupted_call=tests[0].call.id, starved=True)
    completed = Execution(Termination.COMPLETED, every_call_passing())
    report = judge(plan(), starved, HiddenRun(first_sets(), completed))
    assert report.status is ReportStatus.ERROR and report.score == 0
    assert "too busy" in report.message and "submit it again" in report.message
    assert all(test.status is TestStatus.ERROR for test in report.tests)
    assert all("not your code" in test.message for test in report.tests)


def starved_hidden(outcomes: dict[str, CallOutcome]) -> Report:
    """The report of a visible run that completed with every call passing, beside a hidden run
    that the machine starved after it reported `outcomes`."""
    visible = Execution(Termination.COMPLETED, every_call_passing())
    hidden = Execution(Termination.TIMEOUT, outcomes, starved=True)
    return judge(plan(), visible, HiddenRun(first_sets(), hidden))


def test_a_starved_hidden_run_keeps_the_visible_verdicts_and_says_only_it_did_not_run() -> None:
    report = starved_hidden({})
    assert report.status is ReportStatus.ERROR  # the platform's fault: no attempt, no score
    assert (
        "grader failed to run the hidden tests" in report.message and "too busy" in report.message
    )
    visible = [test for test in report.tests if test.visibility.value == "visible"]
    hidden = [test for test in report.tests if test.visibility.value == "hidden"]
    assert visible and all(test.status is TestStatus.PASSED for test in visible)
    assert report.score == 0  # not graded, as every error report: its score counts nowhere
    assert f"Not graded; {len(visible)} of {len(visible)} visible tests passed" in report.message
    assert {p.status.value for p in report.properties} == {"passed"}
    assert hidden and all(test.status is TestStatus.ERROR for test in hidden)
    assert {test.message for test in hidden} == {
        "hidden test: not run, the machine was too busy (a grader fault, not your code)"
    }


def test_a_starved_hidden_run_says_the_same_however_far_it_got() -> None:
    """Which hidden calls finished before the machine stopped it, and with what, depends on the
    hidden inputs: none of it may reach the report."""
    hidden_tests = [test for test in plan().tests if not test.visible]
    wrong = {test.spec.name: shifted(test, 0.5) for test in hidden_tests}
    right = {
        name: dataclasses.replace(outcome, outputs=first_sets()[name].expected)
        for name, outcome in wrong.items()
    }
    reports = [starved_hidden(outcomes) for outcomes in ({}, wrong, right)]
    dumps = [report.model_dump(exclude={"duration_ms"}) for report in reports]
    assert dumps[0] == dumps[1] == dumps[2]


@pytest.mark.parametrize(
    ("termination", "status"),
    [
        (Termination.MEMORY, TestStatus.RESOURCE_LIMIT),
        (Termination.OUTPUT_LIMIT, TestStatus.RESOURCE_LIMIT),
        (Termination.CRASHED, TestStatus.ERROR),
    ],
)
def test_abnormal_ends_map_to_test_statuses(termination: Termination, status: TestStatus) -> None:
    execution = Execution(termination, {}, interrupted_call=plan().tests[0].call.id)
    report = judge_both(execution)
    assert {t.status for t in report.tests if t.visibility.value == "visible"} == {status}
    assert {t.status for t in report.tests if t.visibility.value == "hidden"} == {TestStatus.FAILED}
    assert report.score == 0


TORCH_LOAD = Violation("`torch.load` is not allowed: it runs pickles", line=7)


@pytest.mark.parametrize(
    ("termination", "said"),
    [
        (Termination.REJECTED, "Nothing ran: line 7: `torch.load` is not allowed: it runs pickles"),
        (
            Termination.VIOLATION,
            "Stopped while running: line 7: `torch.load` is not allowed: it runs pickles",
        ),
    ],
)
def test_a_refusal_says_its_reason_once_with_its_line(termination: Termination, said: str) -> None:
    report = judge_both(Execution(termination, {}, violations=(TORCH_LOAD,)))
    assert report.status is ReportStatus.REJECTED
    assert {t.status for t in report.tests} == {TestStatus.REJECTED}
    assert report.message == said
    visible = {t.message for t in report.tests if t.visibility.value == "visible"}
    assert visible == {refused_test_message(termination)}
    assert "torch.load" not in refused_test_message(termination)
    hidden = {t.message for t in report.tests if t.visibility.value == "hidden"}
    assert hidden == {"hidden test: refused"}  # the word the page and the notebook show
    # Kept structured for the editor's marks, but not said again beside the message.
    assert [(f.code, f.message, f.line, f.concepts) for f in report.diagnosis] == [
        ("not-allowed", TORCH_LOAD.message, 7, ["allowed-apis"])
    ]
    assert report.findings_to_say() == []
    assert report.to_gradescope()["output"].count("torch.load") == 1


def test_every_reason_of_a_refusal_is_said_on_a_line_of_its_own() -> None:
    violations = (
        Violation("importing `os` is not allowed; you may import: math; torch", line=1),
        Violation("importing `sys` is not allowed; you may import: math; torch", line=2),
        Violation("the source cannot be read"),
    )
    report = judge_both(Execution(Termination.REJECTED, {}, violations=violations))
    assert report.message.splitlines() == [
        "Nothing ran:",
        "- line 1: importing `os` is not allowed; you may import: math; torch",
        "- line 2: importing `sys` is not allowed; you may import: math; torch",
        "- the source cannot be read",
    ]
    assert [f.line for f in report.diagnosis] == [1, 2, None]


def test_a_wrong_number_of_outputs_says_what_was_returned() -> None:
    outcomes = every_call_passing()
    first = plan().tests[0]
    outcomes[first.call.id] = CallOutcome(first.call.id, outputs=(OutputValue("tuple of 2"),))
    report = judge_both(Execution(Termination.COMPLETED, outcomes))
    assert report.tests[0].message == "`output` should be a torch.Tensor; got tuple of 2"


def test_each_variant_of_a_shared_code_is_diagnosed() -> None:
    """The seed's `extra-output-projection` is two variants, with and without a bias: each one's
    outputs are its own, not the first one's with that code."""
    variants = Reference.load(plan().exercise).variants
    shared = [v for v in variants if v.code == "extra-output-projection"]
    assert len(shared) == 2
    for variant in shared:
        outcomes = {}  # the main calls only: no probe says anything about the weights
        for test in plan().tests:
            job = make_job(plan().exercise.spec, "", (test.call,))
            outputs, _ = run_trusted(variant.entry, test.call, job)
            outcomes[test.call.id] = CallOutcome(test.call.id, outputs=outputs)
        report = judge_both(Execution(Termination.COMPLETED, outcomes))
        assert [(f.code, f.concepts) for f in report.diagnosis] == [
            ("extra-output-projection", ["projections"])
        ]


def test_an_internal_error_holds_nothing_against_the_student() -> None:
    report = internal_error(plan(), "the sandbox could not start")
    assert report.status is ReportStatus.ERROR
    assert all("not your code" in t.message for t in report.tests)


def test_the_gradescope_form_keeps_scores_and_hides_hidden_tests_until_published() -> None:
    report = judge_both(Execution(Termination.COMPLETED, every_call_passing()))
    results = report.to_gradescope()
    assert results["score"] == report.score
    visibilities = {t["visibility"] for t in results["tests"]}
    assert visibilities == {"visible", "after_published"}


def test_the_gradescope_form_says_a_first_mismatch_once_where_the_message_leaves_it() -> None:
    outcomes = every_call_passing()
    first = plan().tests[0]
    outcomes[first.call.id] = shifted(first, 0.5)
    report = judge_both(Execution(Termination.COMPLETED, outcomes))
    mismatch = report.tests[0].first_mismatch
    assert mismatch is not None and "first at" not in report.tests[0].message
    output = report.to_gradescope()["tests"][0]["output"]
    assert output == f"{report.tests[0].message}; {mismatch.describe()}"
    assert output.count(f"{mismatch.expected:g}") == 1


def test_past_its_time_budget_judging_gives_every_verdict_without_the_extras() -> None:
    outcomes = every_call_passing()
    first = plan().tests[0]
    outcomes[first.call.id] = shifted(first, 0.5)
    execution = Execution(Termination.COMPLETED, outcomes)
    report = judge(plan(), execution, HiddenRun(first_sets(), execution), budget_s=0.0)
    assert [t.status for t in report.tests] == [
        TestStatus.FAILED,
        *[TestStatus.PASSED] * (len(report.tests) - 1),
    ]
    assert report.diagnosis == []
    assert {p.status.value for p in report.properties} == {"skipped"}
    assert all("took longer than the grader allows" in p.message for p in report.properties)
