"""Plans of the real exercises: every reference passes its own exercise when graded like a
submission, hidden seeds follow the secret, and probes stay within their budget."""

import pytest

from grader.catalog import Catalog
from grader.judge import judge
from grader.plan import PROBED_TESTS_PER_KIND, build_plan
from grader.report import ReportStatus
from grader.sandbox.calls import run_calls
from grader.sandbox.job import Execution, Termination
from grader.settings import GraderSettings

CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)


@pytest.mark.parametrize("slug", CATALOG.slugs())
def test_every_reference_passes_its_own_exercise(slug: str) -> None:
    """The reference, run through the same executor and judged like a submission (main calls
    and probes), gets full marks: the plan is deterministic and its properties hold for it."""
    plan = build_plan(CATALOG.get(slug), secret="reference-check")
    outcomes = {o.call_id: o for o in run_calls(plan.reference.entry, plan.job(""))}
    report = judge(plan, Execution(Termination.COMPLETED, outcomes))
    assert report.status is ReportStatus.PASSED, report.message
    assert report.diagnosis == []
    assert all(check.status.value == "passed" for check in report.properties)


def test_hidden_inputs_follow_the_secret_and_visible_ones_do_not() -> None:
    exercise = CATALOG.get("multi-headed-self-attention")
    first, second = build_plan(exercise, "one"), build_plan(exercise, "two")
    for a, b in zip(first.tests, second.tests, strict=True):
        same = all(
            (x is None and y is None) or (x is not None and y is not None and (x == y).all())
            for x, y in zip(a.call.args, b.call.args, strict=True)
        )
        assert same is a.visible


def test_probes_stay_within_their_budget_and_run_after_every_test() -> None:
    plan = build_plan(CATALOG.get("multi-headed-self-attention"), "budget")
    kinds = [probe.kind for test in plan.tests for probe in test.probes]
    assert all(kinds.count(kind) <= PROBED_TESTS_PER_KIND for kind in set(kinds))
    calls = [call.id for call in plan.job("").calls]
    mains = [test.call.id for test in plan.tests]
    assert calls[: len(mains)] == [t.call.id for t in plan.tests if t.visible] + [
        t.call.id for t in plan.tests if not t.visible
    ]
