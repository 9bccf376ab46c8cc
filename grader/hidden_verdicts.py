"""A hidden test's verdict: one bit, passed or not, and words that say nothing more.

Nothing computed from a hidden run (its error, duration, termination, outputs, prints or
gradients) reaches the report but that bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.compare import Comparison, compare_outputs
from grader.contract import Execution
from grader.plan import Draw, ExercisePlan, TestPlan
from grader.report import TestResult, TestStatus
from grader.trainability_report import hidden_case_trains

# What each hidden test says when only the hidden run was starved: the same words for every
# hidden test, whatever the run did before it stopped (how far it got would tell its inputs).
_HIDDEN_STARVED = "hidden test: not run, the machine was too busy (a grader fault, not your code)"


@dataclass(frozen=True)
class HiddenRun:
    """The hidden tests' own run: the input set drawn for each, and what came back."""

    draw: Draw
    execution: Execution
    # Each test's comparisons, made once a grading: its bit and the staff's detail read them.
    _compared: dict[str, list[Comparison]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def comparisons(self, test: TestPlan) -> list[Comparison]:
        """The test's outputs against the reference's, on its drawn input set (the caller
        knows it was drawn and its call came back)."""
        if test.spec.name not in self._compared:
            case = self.draw[test.spec.name]
            outcome = self.execution.outcomes[case.call.id]
            self._compared[test.spec.name] = compare_outputs(
                test.output_names, case.expected, outcome.outputs or (), test.decimals
            )
        return self._compared[test.spec.name]


def judge_hidden(plan: ExercisePlan, test: TestPlan, hidden: HiddenRun | None) -> TestResult:
    """One bit: the drawn input set's outputs all match and, where trainability is scored, its
    gradient pass agrees, or not (an error, a timeout, a refusal and a wrong value all read
    "failed"); not run at all where the machine starved the run."""
    if hidden is not None and hidden.execution.starved:
        return bare_result(test, TestStatus.ERROR).model_copy(update={"message": _HIDDEN_STARVED})
    case = None if hidden is None else hidden.draw.get(test.spec.name)
    outcome = None if hidden is None else hidden.execution.outcomes.get(test.spec.name)
    passed = (
        hidden is not None
        and case is not None
        and outcome is not None
        and outcome.error is None
        and all(comparison.passed for comparison in hidden.comparisons(test))
        and hidden_case_trains(plan, case, hidden.execution.outcomes)
    )
    return bare_result(test, TestStatus.PASSED if passed else TestStatus.FAILED)


def bare_result(test: TestPlan, status: TestStatus) -> TestResult:
    """A test's status and points, with a message that says nothing more: all a hidden test
    shows (no duration either: a submission can spend time as its inputs say)."""
    return TestResult(
        name=test.spec.name,
        visibility=test.spec.visibility,
        status=status,
        score=test.spec.points if status is TestStatus.PASSED else 0.0,
        max_score=test.spec.points,
        message=hidden_message(status),
    )


def hidden_message(status: TestStatus) -> str:
    """All a hidden test says: passed, failed, or refused (the word every renderer uses for a
    refusal; the status itself stays `rejected`)."""
    if status is TestStatus.PASSED:
        return "passed"
    return f"hidden test: {'refused' if status is TestStatus.REJECTED else status.value}"
