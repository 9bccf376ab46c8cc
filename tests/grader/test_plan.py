"""Plans of the real exercises: every reference passes its own exercise when graded like a
submission, hidden seeds follow the secret, and probes stay within their budget."""

import itertools

import numpy as np
import pytest

from grader.call_execution import run_calls
from grader.catalog import Catalog
from grader.contract import Call, Execution, Termination
from grader.hidden_verdicts import HiddenRun
from grader.judge import judge
from grader.plan import (
    CONSTRUCTION_SEED,
    HIDDEN_INPUT_SETS,
    PROBED_TESTS_PER_KIND,
    WEIGHTS,
    Case,
    TestPlan,
)
from grader.plan_building import build_plan
from grader.reference import Reference
from grader.report import ReportStatus
from grader.settings import GraderSettings
from grader.spec import Property

CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)


@pytest.mark.parametrize("slug", CATALOG.slugs())
def test_every_reference_passes_its_own_exercise(slug: str) -> None:
    """The reference, run through the same executor and judged like a submission (main calls
    and probes), gets full marks: the plan is deterministic and its properties hold for it."""
    plan = build_plan(CATALOG.get(slug), secret="reference-check")
    entries = Reference.load(plan.exercise).entries
    draw = plan.draw()
    visible, hidden = (
        Execution(Termination.COMPLETED, {o.call_id: o for o in run_calls(entries, job)})
        for job in (plan.visible_job(""), plan.hidden_job("", draw))
    )
    report = judge(plan, visible, HiddenRun(draw, hidden))
    assert report.status is ReportStatus.PASSED, report.message
    assert report.diagnosis == []
    assert all(check.status.value == "passed" for check in report.properties)


def same_arrays(a: Call, b: Call) -> bool:
    return all(
        x is y is None
        or (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.array_equal(x, y))
        for x, y in zip(a.args, b.args, strict=True)
    )


def test_hidden_inputs_follow_the_secret_and_visible_ones_do_not() -> None:
    exercise = CATALOG.get("multi-headed-self-attention")
    first, second = build_plan(exercise, "one"), build_plan(exercise, "two")
    for a, b in zip(first.tests, second.tests, strict=True):
        assert same_arrays(a.call, b.call) is a.visible


def test_each_hidden_test_has_input_sets_of_its_own_and_a_submission_draws_one() -> None:
    plan = build_plan(CATALOG.get("multi-headed-self-attention"), "sets")
    hidden = [test for test in plan.tests if not test.visible]
    for test in hidden:
        assert len(test.cases) == HIDDEN_INPUT_SETS
        calls = [case.call for case in test.cases]
        assert not any(same_arrays(a, b) for a, b in itertools.combinations(calls, 2))
    draws = [plan.draw() for _ in range(40)]
    assert all(draw.keys() == {test.spec.name for test in hidden} for draw in draws)
    assert len({id(draw[hidden[0].spec.name]) for draw in draws}) > 1


def test_a_job_holds_no_hidden_input_or_seed_but_the_one_run() -> None:
    """The visible run carries no hidden input at all; the hidden run only the drawn sets; no
    call carries a seed that a hidden test's inputs came from."""
    plan = build_plan(CATALOG.get("torch-multihead-parity"), "seeds")  # grader-drawn weights
    draw = plan.draw()
    hidden_calls = [call for test in plan.tests if not test.visible for call in calls_of(test)]
    for call in plan.visible_job("").calls:
        assert not any(same_arrays(call, hidden) for hidden in hidden_calls)
        assert not any(same_cotangents(call, hidden) for hidden in hidden_calls)
    sent = plan.hidden_job("", draw).calls
    drawn = [draw[test.spec.name] for test in plan.tests if not test.visible]
    # Each hidden test's call on its drawn set, then the gradient pass on that same set.
    assert [call.id for call in sent] == [case.call.id for case in drawn] + [
        f"{case.call.id} [gradients]" for case in drawn
    ]
    drawn_calls = [call for case in drawn for call in case_calls(case)]
    assert all(any(call is drawn_call for drawn_call in drawn_calls) for call in sent)
    assert {call.seed for call in (*plan.visible_job("").calls, *sent)} == {CONSTRUCTION_SEED}


def case_calls(case: Case) -> list[Call]:
    return [case.call] + ([case.gradients.call] if case.gradients else [])


def calls_of(test: TestPlan) -> list[Call]:
    return [call for case in test.cases for call in case_calls(case)]


def same_cotangents(a: Call, b: Call) -> bool:
    if a.backprop is None or b.backprop is None:
        return False
    pairs = zip(a.backprop.cotangents, b.backprop.cotangents, strict=False)
    return any(x.shape == y.shape and bool((x == y).all()) for x, y in pairs)


def test_probes_stay_within_their_budget_and_run_after_every_test() -> None:
    plan = build_plan(CATALOG.get("multi-headed-self-attention"), "budget")
    kinds = [probe.kind for test in plan.tests for probe in test.probes]
    assert all(kinds.count(kind) <= PROBED_TESTS_PER_KIND for kind in set(kinds))
    calls = [call.id for call in plan.visible_job("").calls]
    visible = [test.call.id for test in plan.tests if test.visible]
    assert calls[: len(visible)] == visible
    assert all(
        probe.kind in (*Property, WEIGHTS) for probe in (p for t in plan.tests for p in t.probes)
    )
