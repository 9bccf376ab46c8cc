"""What the report says of trainability (`grader.trainability`): one property per check, one
finding per code, and, where the exercise scores it, the verdict of each test it was judged on.

Visible tests alone tell anything; a hidden test's gradient pass decides its one bit, where the
checks are scored, and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from grader.contract import CallOutcome
from grader.plan import Case, ExercisePlan, TestPlan
from grader.report import Finding, PropertyCheck, PropertyStatus, TestResult, TestStatus
from grader.spec import Visibility, WeightSource
from grader.trainability import Fault, gradient_faults, stability_fault
from grader.trainability_spec import GRADIENT_PASS, TrainabilityCheck


@dataclass(frozen=True)
class Trainability:
    faults: dict[str, list[Fault]] = field(default_factory=dict)  # by visible test name
    properties: list[PropertyCheck] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def judge_trainability(
    plan: ExercisePlan,
    outcomes: Mapping[str, CallOutcome],
    passed: set[str],
    *,
    stopped_early: bool = False,
) -> Trainability:
    """The checks judged on the visible tests whose outputs matched (`passed`). Where the run
    stopped early, a test whose check's call never finished is held to have failed it (code must
    not pass a scored check by never letting it finish); the report says why the run stopped,
    once, and the property is not judged."""
    wanted = plan.exercise.spec.trainability_checks
    if not wanted:
        return Trainability()
    judged: dict[TrainabilityCheck, int] = dict.fromkeys(wanted, 0)
    faults: dict[str, list[Fault]] = {}
    for test in plan.tests:
        if test.spec.name not in passed:
            continue
        found = _test_faults(plan, test, outcomes, judged, stopped_early)
        found = [fault for fault in found if fault.check in wanted]
        if found:
            faults[test.spec.name] = found
    # A check none of whose tests matched the reference's outputs says nothing: the outputs are
    # the mistake to fix first.
    properties = [_property(check, judged[check], faults) for check in wanted if judged[check]]
    return Trainability(faults, properties, _findings(faults))


def held_to_training(result: TestResult, faults: dict[str, list[Fault]]) -> TestResult:
    """A visible test whose outputs match fails where the code does not train as the
    reference's does (the exercise scores trainability)."""
    found = faults.get(result.name) if result.visibility is Visibility.VISIBLE else None
    if not found:
        return result
    return result.model_copy(
        update={
            "status": TestStatus.FAILED,
            "score": 0.0,
            "message": f"the outputs match, but {found[0].message}",
        }
    )


def _test_faults(
    plan: ExercisePlan,
    test: TestPlan,
    outcomes: Mapping[str, CallOutcome],
    judged: dict[TrainabilityCheck, int],
    stopped_early: bool,
) -> list[Fault]:
    found = []
    gradient_case = test.cases[0].gradients
    if gradient_case is not None:
        outcome = outcomes.get(gradient_case.call.id)
        faults = gradient_faults(gradient_case.expected, outcome, by_name=_by_name(plan))
        if outcome is None and stopped_early:
            found += [_unfinished(check, "gradient pass") for check in GRADIENT_PASS]
        elif faults is not None:
            _count(judged, GRADIENT_PASS)
            found += faults
    stability = _stability_faults(test, outcomes, stopped_early)
    if stability is not None:
        if not any(fault.code is None for fault in stability):
            _count(judged, (TrainabilityCheck.STABILITY,))
        found += stability
    return found


def _count(judged: dict[TrainabilityCheck, int], checks: tuple[TrainabilityCheck, ...]) -> None:
    """One more test judged for each of `checks` the exercise asks for."""
    for check in checks:
        if check in judged:
            judged[check] += 1


def _stability_faults(
    test: TestPlan, outcomes: Mapping[str, CallOutcome], stopped_early: bool
) -> list[Fault] | None:
    """The test's first scale at which the code breaks, if any; None where no scaled call ran."""
    ran = False
    for scaled in test.scaled:
        outcome = outcomes.get(scaled.case.call.id)
        if outcome is None and stopped_early:
            return [_unfinished(TrainabilityCheck.STABILITY, "run on larger inputs")]
        ran = ran or outcome is not None
        fault = stability_fault(scaled.scale, scaled.case.expected, outcome)
        if fault is not None:
            return [fault]
    return [] if ran else None


def _unfinished(check: TrainabilityCheck, what: str) -> Fault:
    """A check whose call the run never finished: no code to name; the report says why."""
    return Fault(check, None, f"its {what} did not run: the run stopped before it")


def hidden_case_trains(plan: ExercisePlan, case: Case, outcomes: Mapping[str, CallOutcome]) -> bool:
    """A hidden input set's gradient pass, where it has one: the part of its bit that says the
    code trains as the reference does."""
    return hidden_case_faults(plan, case, outcomes) == []


def hidden_case_faults(
    plan: ExercisePlan, case: Case, outcomes: Mapping[str, CallOutcome]
) -> list[Fault] | None:
    """What keeps a hidden input set's gradient pass from the reference's, among the checks the
    exercise scores (none where it has no gradient pass); None where it cannot be judged."""
    if case.gradients is None:
        return []
    faults = gradient_faults(
        case.gradients.expected, outcomes.get(case.gradients.call.id), by_name=_by_name(plan)
    )
    wanted = plan.exercise.spec.trainability_checks
    return None if faults is None else [fault for fault in faults if fault.check in wanted]


def _by_name(plan: ExercisePlan) -> bool:
    return plan.exercise.spec.weights is WeightSource.GRADER


def _property(
    check: TrainabilityCheck, judged: int, faults: Mapping[str, list[Fault]]
) -> PropertyCheck:
    for test, found in faults.items():
        for fault in found:
            if fault.check is check and fault.code is not None:
                # The diagnosis says what and how to fix it: said once, there.
                return PropertyCheck(
                    name=check.value,
                    status=PropertyStatus.FAILED,
                    message=f"{fault.code} in test {test!r}: see the diagnosis",
                )
    tests = "test" if judged == 1 else "tests"
    return PropertyCheck(
        name=check.value,
        status=PropertyStatus.PASSED,
        message=f"holds on the {judged} visible {tests} it was checked on",
    )


def _findings(faults: Mapping[str, list[Fault]]) -> list[Finding]:
    """One finding per code, with the first message and every test that shows it."""
    evidence: dict[str, tuple[str, list[str]]] = {}
    for test, found in faults.items():
        for fault in found:
            if fault.code is None:  # the run's stop, which the report says already
                continue
            tests = evidence.setdefault(fault.code, (fault.message, []))[1]
            if test not in tests:
                tests.append(test)
    return [
        Finding(code=code, message=message, tests=tests)
        for code, (message, tests) in evidence.items()
    ]
