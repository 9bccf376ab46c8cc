"""How `Grader.grade` runs a submission: visible and hidden tests in runs of their own, at once
where the sandbox allows it, and no hidden run for a source refused before running."""

from __future__ import annotations

import threading

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
