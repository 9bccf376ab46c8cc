"""What each hidden test did, for the course's staff alone: the input set it was graded on and
its inputs' shapes, its outputs' comparisons (the first mismatch, as a visible test shows it),
the error it raised, or where and why its run stopped.

Computed in the trusted grading process from what it already holds (the drawn input set, the
reference's outputs) and what the hidden child sent back through the same channel as ever: the
child tells nothing more than before. It is never part of the report (`grader.hidden_verdicts`:
a student learns one bit per hidden test); the service keeps it apart (app.grading.models).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from grader.contract import FORWARD, Arg, Call, CallOutcome, Execution, Termination
from grader.hidden_verdicts import HiddenRun
from grader.judge import error_message, output_check
from grader.plan import Case, ExercisePlan, TestPlan
from grader.refusal import refusal_message
from grader.report import OutputCheck, Report, TestStatus
from grader.stopped_run import stop_reason
from grader.trainability_report import hidden_case_faults

_REFUSED = (Termination.REJECTED, Termination.VIOLATION)


class HiddenOutcome(StrEnum):
    PASSED = "passed"
    WRONG_OUTPUT = "wrong_output"  # an output differs from the reference's
    DOES_NOT_TRAIN = "does_not_train"  # outputs match; its scored gradient pass does not
    RAISED = "raised"
    STOPPED = "stopped"  # the run ended during this test: a time-out, memory, a crash
    REFUSED = "refused"  # the policy refused the source, or a forbidden call ended the run
    NOT_RUN = "not_run"  # never reached, or the machine starved the run


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class HiddenInput(_Model):
    """One argument of the test's call: an array's shape and dtype, or a scalar's value."""

    step: int = Field(description="the call of a sequence, from 1 (1 for a one-call test)")
    method: str = Field(description="the method called: `forward` for the entry point itself")
    position: int = Field(description="the argument's position, from 1")
    shape: list[int] | None = None
    dtype: str | None = None
    value: bool | int | float | None = Field(default=None, description="a scalar's value")


class HiddenError(_Model):
    kind: str = Field(description="the exception's type, e.g. `IndexError`")
    message: str
    line: int | None = Field(default=None, description="the submission's line it came from")
    contract: bool = Field(default=False, description="the code does not fit the exercise")


class HiddenTestDetail(_Model):
    name: str
    passed: bool = Field(description="the one bit the student sees")
    outcome: HiddenOutcome
    summary: str = Field(description="what it did, in a sentence")
    input_set: int | None = Field(
        description="which of the test's input sets it was graded on, from 1; null: none drawn"
    )
    inputs: list[HiddenInput] = Field(default_factory=list)
    outputs: list[OutputCheck] = Field(
        default_factory=list,
        description="each output's comparison, for a test that failed (one that passed matched)",
    )
    error: HiddenError | None = None
    stdout: str = ""
    duration_ms: float | None = None


class HiddenRunDetail(_Model):
    termination: Termination | None = Field(
        description="how the hidden tests' run ended; null: it never ran (the source refused)"
    )
    tests: list[HiddenTestDetail]


def describe_hidden(
    plan: ExercisePlan, hidden: HiddenRun | None, report: Report
) -> HiddenRunDetail:
    """Each hidden test of `report` (judged on `hidden`, None where it did not run), in detail."""
    bits = {test.name: test.status is TestStatus.PASSED for test in report.tests}
    tests = [
        _detail(plan, test, hidden, passed=bits.get(test.spec.name, False))
        for test in plan.tests
        if not test.visible
    ]
    return HiddenRunDetail(
        termination=None if hidden is None else hidden.execution.termination, tests=tests
    )


def _detail(
    plan: ExercisePlan, test: TestPlan, hidden: HiddenRun | None, *, passed: bool
) -> HiddenTestDetail:
    case = None if hidden is None else hidden.draw.get(test.spec.name)
    if hidden is None or case is None:
        return _not_run(test, passed, "not run: the policy refused the source (see the report)")
    shown = {
        "input_set": next((n for n, one in enumerate(test.cases, start=1) if one is case), None),
        "inputs": _inputs(case.call),
    }
    execution = hidden.execution
    if execution.starved:
        reason = "not run: the machine gave the run no CPU, even after retries (a grader fault)"
        return _not_run(test, passed, reason).model_copy(update=shown)
    outcome = execution.outcomes.get(case.call.id)
    if outcome is None:
        return _unfinished(plan, test, case, execution, passed).model_copy(update=shown)
    return _judged(plan, test, case, hidden, outcome, passed=passed).model_copy(update=shown)


def _not_run(
    test: TestPlan, passed: bool, summary: str, outcome: HiddenOutcome = HiddenOutcome.NOT_RUN
) -> HiddenTestDetail:
    return HiddenTestDetail(
        name=test.spec.name, passed=passed, outcome=outcome, summary=summary, input_set=None
    )


def _unfinished(
    plan: ExercisePlan, test: TestPlan, case: Case, execution: Execution, passed: bool
) -> HiddenTestDetail:
    """A test whose call never came back: refused, stopped at it, or never reached."""
    stopped_here = execution.interrupted_call == case.call.id
    if execution.termination in _REFUSED and (stopped_here or execution.interrupted_call is None):
        words = refusal_message(execution.termination, execution.violations, execution.detail)
        return _not_run(test, passed, words, HiddenOutcome.REFUSED)
    if stopped_here:
        reason = stop_reason(execution, plan.exercise.spec.limits.to_limits())
        summary = f"the run stopped at this test: the code {reason}"
        return _not_run(test, passed, summary, HiddenOutcome.STOPPED)
    at = execution.interrupted_call
    return _not_run(
        test, passed, f"not reached: the run stopped {f'at {at!r}' if at else 'outside any test'}"
    )


def _judged(
    plan: ExercisePlan,
    test: TestPlan,
    case: Case,
    hidden: HiddenRun,
    outcome: CallOutcome,
    *,
    passed: bool,
) -> HiddenTestDetail:
    """A test whose call came back: the error it raised, or its outputs' comparisons (those its
    bit was judged on, not made again) and, where they all match, its gradient pass."""
    ran = HiddenTestDetail(
        name=test.spec.name,
        passed=passed,
        outcome=HiddenOutcome.PASSED,
        summary="all outputs match, and it trains as the reference does where that is scored",
        input_set=None,
        stdout=outcome.stdout,
        duration_ms=outcome.duration_s * 1000,
    )
    if passed:
        return ran
    if outcome.error is not None:
        error = outcome.error
        raised = HiddenError(
            kind=error.type_name, message=error.message, line=error.line, contract=error.contract
        )
        summary = error_message(error)
        return ran.model_copy(
            update={"outcome": HiddenOutcome.RAISED, "summary": summary, "error": raised}
        )
    comparisons = hidden.comparisons(test)
    outputs = [output_check(n, c) for n, c in zip(test.output_names, comparisons, strict=False)]
    ran = ran.model_copy(update={"outputs": outputs})
    wrong = next((check for check in outputs if not check.passed), None)
    if wrong is not None:
        summary = _mismatch_summary(wrong)
        return ran.model_copy(update={"outcome": HiddenOutcome.WRONG_OUTPUT, "summary": summary})
    faults = hidden_case_faults(plan, case, hidden.execution.outcomes)
    if faults:
        summary = "outputs match; its gradient pass does not: " + "; ".join(
            fault.message for fault in faults
        )
        return ran.model_copy(update={"outcome": HiddenOutcome.DOES_NOT_TRAIN, "summary": summary})
    if faults is None:
        summary = "outputs match; its gradient pass did not come back (the run stopped first)"
        return ran.model_copy(update={"outcome": HiddenOutcome.DOES_NOT_TRAIN, "summary": summary})
    return ran


def _mismatch_summary(check: OutputCheck) -> str:
    first = check.first_mismatch
    return check.message if first is None else f"{check.message}; {first.describe()}"


def _inputs(call: Call) -> list[HiddenInput]:
    """The call's arguments, each step's in turn for a sequence."""
    steps: Sequence[tuple[str, tuple[Arg, ...]]] = [
        (step.method, step.args) for step in call.steps
    ] or [(FORWARD, call.args)]
    return [
        _input(number, method, position, arg)
        for number, (method, args) in enumerate(steps, start=1)
        for position, arg in enumerate(args, start=1)
    ]


def _input(step: int, method: str, position: int, arg: Arg) -> HiddenInput:
    where = HiddenInput(step=step, method=method, position=position)
    if isinstance(arg, np.ndarray):
        return where.model_copy(update={"shape": list(arg.shape), "dtype": str(arg.dtype)})
    return where.model_copy(update={"value": arg})
