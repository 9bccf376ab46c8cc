"""The engine's front door: grade a submission's source for an exercise and return its report."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from grader.catalog import Catalog
from grader.contract import Execution, Termination
from grader.errors import SandboxUnavailable
from grader.judge import HiddenRun, internal_error, judge
from grader.plan import ExercisePlan, build_plan
from grader.report import Report
from grader.sandbox.interface import Sandbox

log = logging.getLogger(__name__)


class Grader:
    """Grades submissions in a sandbox against plans built once per exercise.

    Thread-safe: the service grades several submissions at once through one Grader.
    """

    def __init__(self, catalog: Catalog, sandbox: Sandbox, secret: str) -> None:
        self.catalog = catalog
        self.sandbox = sandbox
        self._secret = secret
        self._plans: dict[str, ExercisePlan] = {}
        self._plans_lock = threading.Lock()

    def plan(self, slug: str) -> ExercisePlan:
        """The exercise's plan, built on first use; raises UnknownExerciseError."""
        exercise = self.catalog.get(slug)
        with self._plans_lock:
            if slug not in self._plans:
                self._plans[slug] = build_plan(exercise, self._secret)
            return self._plans[slug]

    def warm(self) -> None:
        """Build every plan now, so no submission waits for the references."""
        for slug in self.catalog.slugs():
            self.plan(slug)

    def grade(self, slug: str, source: str) -> Report:
        """Raises UnknownExerciseError; a failing or hostile submission is a report, not an
        exception, and so is a sandbox that could not run it (status "error")."""
        started = time.perf_counter()
        plan = self.plan(slug)
        try:
            report = self._grade(plan, source)
        except SandboxUnavailable as error:
            log.exception("grading %s failed inside the grader", slug)
            report = internal_error(plan, str(error))
        return report.model_copy(update={"duration_ms": (time.perf_counter() - started) * 1000})

    def _grade(self, plan: ExercisePlan, source: str) -> Report:
        """Visible tests in one child, hidden tests in another: whatever the submission learns
        in the visible one (its prints, errors and probes reach the student) holds no hidden
        input. Run one after the other, a source the static layer refuses gets no hidden run."""
        draw = plan.draw()
        visible_job, hidden_job = plan.visible_job(source), plan.hidden_job(source, draw)
        if self.sandbox.parallel_runs > 1:  # at once: the grading lasts as long as the longer
            with ThreadPoolExecutor(max_workers=1) as pool:
                hidden_run = pool.submit(self.sandbox.run, hidden_job)
                visible = self.sandbox.run(visible_job)
                hidden: Execution | None = hidden_run.result()
        else:
            visible = self.sandbox.run(visible_job)
            rejected = visible.termination is Termination.REJECTED
            hidden = None if rejected else self.sandbox.run(hidden_job)
        return judge(plan, visible, None if hidden is None else HiddenRun(draw, hidden))
