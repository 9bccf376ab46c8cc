"""How `Grader.grade` runs a submission: visible and hidden tests in runs of their own, at once
where the sandbox allows it, no hidden run for a source refused before running, and a run the
machine starved run again."""

from __future__ import annotations

import threading

import pytest

from grader.catalog import Catalog
from grader.contract import Execution, Job, Termination, Violation
from grader.report import ReportStatus
from grader.runner import Grader
from grader.sandbox.interface import Layer
from grader.settings import GraderSettings
from grader.spec import Visibility

CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)
SLUG = "multi-headed-self-attention"


class ScriptedSandbox:
    """Answers each run with `ending`, noting each job; with two parallel runs, each waits
    until the other has started, so a grading that ran them one after the other would hang."""

    def __init__(self, parallel_runs: int, ending: Termination) -> None:
        self.parallel_runs = parallel_runs
        self.ending = ending
        self.jobs: list[Job] = []
        self._both = threading.Barrier(2, timeout=10)

    def run(self, job: Job) -> Execution:
        self.jobs.append(job)
        if self.parallel_runs > 1:
            self._both.wait()
        violations = (Violation("refused"),) if self.ending is Termination.REJECTED else ()
        return Execution(self.ending, {}, violations=violations)

    def layers(self) -> list[Layer]:
        return []

    def close(self) -> None:
        pass


def hidden_names() -> set[str]:
    return {
        test.name for test in CATALOG.get(SLUG).spec.tests if test.visibility is Visibility.HIDDEN
    }


def test_where_runs_may_overlap_the_visible_and_hidden_runs_go_at_once() -> None:
    sandbox = ScriptedSandbox(parallel_runs=2, ending=Termination.COMPLETED)
    report = Grader(CATALOG, sandbox, "runner").grade(SLUG, "source")
    assert report.status is ReportStatus.FAILED
    assert sorted(len(job.calls) > len(hidden_names()) for job in sandbox.jobs) == [False, True]


def test_one_at_a_time_a_refused_source_gets_no_hidden_run() -> None:
    sandbox = ScriptedSandbox(parallel_runs=1, ending=Termination.REJECTED)
    report = Grader(CATALOG, sandbox, "runner").grade(SLUG, "source")
    assert report.status is ReportStatus.REJECTED
    (job,) = sandbox.jobs
    assert not {call.id for call in job.calls} & hidden_names()


class StarvingSandbox:
    """Runs one job at a time; the machine starves the first `starved` runs of the visible or
    the hidden job (`which`), and every other run completes having reported nothing."""

    parallel_runs = 1

    def __init__(self, which: str, starved: int) -> None:
        self.which = which
        self.starved = starved
        self.jobs: list[Job] = []

    def run(self, job: Job) -> Execution:
        self.jobs.append(job)
        hidden = bool({call.id for call in job.calls} & hidden_names())
        if (self.which == "hidden") is hidden and self.starved:
            self.starved -= 1
            return Execution(Termination.TIMEOUT, {}, starved=True)
        return Execution(Termination.COMPLETED, {})

    def layers(self) -> list[Layer]:
        return []

    def close(self) -> None:
        pass


def grade_starving(which: str, starved: int) -> tuple[ReportStatus, list[Job]]:
    sandbox = StarvingSandbox(which, starved)
    grader = Grader(CATALOG, sandbox, "runner", starved_retry_pauses_s=(0.0, 0.0))
    return grader.grade(SLUG, "source").status, sandbox.jobs


@pytest.mark.parametrize("which", ["visible", "hidden"])
def test_a_run_the_machine_starved_is_run_again_and_judged_on_its_code(which: str) -> None:
    status, jobs = grade_starving(which, starved=2)
    assert status is ReportStatus.FAILED  # the code's verdict: it reported nothing
    assert len(jobs) == 4
    runs = [id(job) for job in jobs]  # the same job again: a hidden run keeps its input set
    assert sorted(runs.count(job) for job in set(runs)) == [1, 3]


@pytest.mark.parametrize("which", ["visible", "hidden"])
def test_a_run_still_starved_after_every_retry_is_the_platform_s_fault(which: str) -> None:
    status, jobs = grade_starving(which, starved=99)
    assert status is ReportStatus.ERROR
    assert len(jobs) == 4  # the first try and one per pause: no more


def test_a_failure_to_describe_the_hidden_tests_for_staff_keeps_the_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("a bug of the staff's detail")

    monkeypatch.setattr("grader.runner.describe_hidden", broken)
    sandbox = ScriptedSandbox(parallel_runs=1, ending=Termination.COMPLETED)

    graded = Grader(CATALOG, sandbox, "runner").grade_in_full(SLUG, "source")

    assert graded.report.status is ReportStatus.FAILED
    assert graded.hidden is None


def test_a_grading_in_full_describes_each_hidden_test_beside_the_report() -> None:
    sandbox = ScriptedSandbox(parallel_runs=1, ending=Termination.COMPLETED)

    graded = Grader(CATALOG, sandbox, "runner").grade_in_full(SLUG, "source")

    assert graded.hidden is not None
    assert {test.name for test in graded.hidden.tests} == hidden_names()
