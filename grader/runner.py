"""The engine's front door: grade a submission's source for an exercise and return its report."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from grader.catalog import Catalog
from grader.contract import Execution, Job, Termination
from grader.errors import (
    DefinitionProblem,
    ExerciseDefinitionError,
    ReferenceFailure,
    SandboxUnavailable,
)
from grader.hidden_detail import HiddenRunDetail, describe_hidden
from grader.hidden_verdicts import HiddenRun
from grader.judge import internal_error, judge
from grader.plan import ExercisePlan
from grader.plan_cache import PlanCache
from grader.report import Report
from grader.sandbox.interface import Sandbox
from grader.spec import Exercise, module_path

log = logging.getLogger(__name__)

# A run the machine starved (grader.sandbox.supervision: it waited for a CPU until the ceiling
# of its wall limit) is run again after each of these pauses, with the CPU a machine that has
# calmed down gives it; starved after the last, it is the platform's fault (grader.judge).
STARVED_RETRY_PAUSES_S = (2.0, 10.0)


@dataclass(frozen=True)
class Graded:
    """A grading's report, and what its hidden tests did (`grader.hidden_detail`: for staff,
    never part of the report); None where no plan ran them (the grader itself failed)."""

    report: Report
    hidden: HiddenRunDetail | None


class Grader:
    """Grades submissions in a sandbox against plans built once per exercise.

    Thread-safe: the service grades several submissions at once through one Grader.
    """

    def __init__(
        self,
        catalog: Catalog,
        sandbox: Sandbox,
        secret: str,
        cache: PlanCache | None = None,
        *,
        starved_retry_pauses_s: Sequence[float] = STARVED_RETRY_PAUSES_S,
    ) -> None:
        self.catalog = catalog  # replaced whole by `update`, never changed in place
        self.sandbox = sandbox
        self._retry_pauses_s = tuple(starved_retry_pauses_s)
        self._secret = secret
        self._cache = cache  # plans kept on disk: none is built twice, across processes too
        # By slug and version: a changed exercise gets a plan of its own, its reference outputs
        # computed again, while a grading in flight finishes on the plan it started with.
        self._plans: dict[tuple[str, str], ExercisePlan] = {}
        self._plans_lock = threading.Lock()
        self._update_lock = threading.Lock()  # one update at a time: none lost to another

    def plan(self, slug: str) -> ExercisePlan:
        """The plan of the exercise served under `slug`, built on first use; raises
        UnknownExerciseError, or ExerciseDefinitionError for a broken exercise."""
        return self._plan_for(self.catalog.get(slug))

    def warm(self) -> Catalog:
        """Build every plan now, so no submission waits for the references; an exercise whose
        reference fails on its tests is set apart as broken."""
        return self.update(self.catalog)

    def update(self, scanned: Catalog) -> Catalog:
        """Serve `scanned`, a new scan of the exercises folder, once each changed exercise's plan
        is built: one that fails (like one the scan found broken) keeps its last good version
        serving, or is broken if it has none. Returns the catalog now served."""
        with self._update_lock:
            previous = self.catalog
            catalog = scanned.succeeding(previous)
            for exercise in list(catalog):
                try:
                    self._plan_for(exercise)
                except (ExerciseDefinitionError, ReferenceFailure) as error:
                    last_good = previous.serving(exercise.spec.slug)
                    fallback = (
                        last_good if last_good and last_good.version != exercise.version else None
                    )
                    failure = _definition_error(exercise, error)
                    catalog = catalog.failing(exercise, failure, fallback)
            self.catalog = catalog
        with self._plans_lock:
            served = {(exercise.spec.slug, exercise.version) for exercise in catalog}
            self._plans = {key: plan for key, plan in self._plans.items() if key in served}
        return catalog

    def _plan_for(self, exercise: Exercise) -> ExercisePlan:
        key = (exercise.spec.slug, exercise.version)
        with self._plans_lock:
            plan = self._plans.get(key)
        if plan is None:  # built unlocked: gradings of other exercises go on meanwhile
            plan = self._load_or_build(exercise)
            with self._plans_lock:
                plan = self._plans.setdefault(key, plan)
        return plan

    def _load_or_build(self, exercise: Exercise) -> ExercisePlan:
        plan = self._cache.load(exercise) if self._cache else None
        if plan is None:
            # Imported on a miss only: building runs the reference, which imports torch (about
            # a second), and a plan from the cache needs none of it.
            from grader.plan_building import build_plan  # noqa: PLC0415

            plan = build_plan(exercise, self._secret)
            if self._cache:
                self._cache.store(plan)
        return plan

    def grade(self, slug: str, source: str) -> Report:
        """Raises UnknownExerciseError; a failing or hostile submission is a report, not an
        exception, and so is a sandbox that could not run it (status "error")."""
        return self.grade_in_full(slug, source).report

    def grade_in_full(self, slug: str, source: str) -> Graded:
        """The report, and what each hidden test did; raises as `grade` does."""
        started = time.perf_counter()
        plan = self.plan(slug)
        try:
            report, hidden = self._grade(plan, source)
        except SandboxUnavailable as error:
            log.exception("grading %s failed inside the grader", slug)
            return Graded(_timed(internal_error(plan, str(error)), started), None)
        # The report's duration is the grading's: describing the hidden tests takes no part.
        report = _timed(report, started)
        return Graded(report, _described(plan, hidden, report))

    def _grade(self, plan: ExercisePlan, source: str) -> tuple[Report, HiddenRun | None]:
        """Visible tests in one child, hidden tests in another: whatever the submission learns
        in the visible one (its prints, errors and probes reach the student) holds no hidden
        input. Run one after the other, a source the static layer refuses gets no hidden run."""
        draw = plan.draw()
        visible_job, hidden_job = plan.visible_job(source), plan.hidden_job(source, draw)
        if self.sandbox.parallel_runs > 1:  # at once: the grading lasts as long as the longer
            with ThreadPoolExecutor(max_workers=1) as pool:
                hidden_run = pool.submit(self._run, hidden_job)
                visible = self._run(visible_job)
                hidden: Execution | None = hidden_run.result()
        else:
            visible = self._run(visible_job)
            rejected = visible.termination is Termination.REJECTED
            hidden = None if rejected else self._run(hidden_job)
        judged = None if hidden is None else HiddenRun(draw, hidden)
        return judge(plan, visible, judged, source=source), judged

    def _run(self, job: Job) -> Execution:
        """The job's execution, run again after a pause each time the machine starved it (the
        same job: a hidden run keeps its input set), as often as there are pauses."""
        execution = self.sandbox.run(job)
        for pause_s in self._retry_pauses_s:
            if not execution.starved:
                break
            log.warning(
                "a run was starved of CPU by a busy machine; running it again in %g s", pause_s
            )
            time.sleep(pause_s)
            execution = self.sandbox.run(job)
        return execution


def _described(
    plan: ExercisePlan, hidden: HiddenRun | None, report: Report
) -> HiddenRunDetail | None:
    """What the hidden tests did, for staff; None should describing them fail: an extra for
    staff never costs a student the report."""
    try:
        return describe_hidden(plan, hidden, report)
    except Exception:
        log.exception("describing the hidden tests of %s failed", plan.exercise.spec.slug)
        return None


def _timed(report: Report, started: float) -> Report:
    return report.model_copy(update={"duration_ms": (time.perf_counter() - started) * 1000})


def _definition_error(
    exercise: Exercise, error: ExerciseDefinitionError | ReferenceFailure
) -> ExerciseDefinitionError:
    if isinstance(error, ExerciseDefinitionError):
        return error
    cause = f": {type(error.__cause__).__name__}: {error.__cause__}" if error.__cause__ else ""
    expected = f"runs on every test ({error}{cause})"
    return ExerciseDefinitionError(
        [DefinitionProblem(module_path(exercise.spec.reference), "-", expected)]
    )
