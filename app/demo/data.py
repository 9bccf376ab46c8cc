"""A demo course: a class of students working through every exercise of the catalog over three
weeks, for the course dashboard's tests and screenshots and for operators trying it
(`autograder demo-course`).

Each student has a skill. On each exercise they hold some of the mistakes its reference knows
(the common ones more often) and sometimes one that no known mistake describes; they fix one
now and then, pass or give up, and some go on submitting after a pass. Reports are built as the
grader builds them (app.demo.reports) and stored through `app.grading.report_store`. The same
seed makes the same course.

Reports repeat (students with the same mistake get the same report), so each distinct one is
built and turned into columns and rows once; submissions are written in bulk.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session
from ulid import ULID

from app.core.db import Database
from app.core.models import Base, Submission, SubmissionStatus
from app.courses.registry import course_named
from app.demo.behaviours import Unexplained
from app.demo.reports import Attempt, Bug, Outcome, build_report
from app.grading.models import ReportOutcome
from app.grading.report_store import outcome_rows, report_columns
from app.staff.mistakes import known_mistakes
from grader.catalog import Catalog
from grader.spec import Exercise, Property, Visibility

TERM = timedelta(days=21)
# Exercise n, in the catalog's order, is handed out on day 2n, or sooner where the catalog is
# too long for every exercise to be out a week before the term's end.
_RELEASE_GAP = timedelta(days=2)
_LAST_RELEASE = TERM - timedelta(days=7)
# The first exercise was fixed on its third day: its reports before carry an older version.
_FIXED_AFTER = timedelta(days=3)
_STUDENTS_PER_BATCH = 100
# Wrong solutions of an exercise that none of its known mistakes describes.
_UNKNOWN_BUGS = 6
# Submissions per exercise made by no student: the instructor trying a solution.
_STAFF_TRIES = 3


def seed_course(
    database: Database,
    catalog: Catalog,
    course_slug: str,
    *,
    students: int = 1000,
    attempts: int = 20,
    seed: int = 0,
    start: datetime | None = None,
) -> int:
    """Write the demo course's submissions, at most `attempts` per student and exercise, for
    every exercise of `catalog`; returns how many. The term starts on `start` (default: three
    weeks ago, at midnight UTC). The same seed, course and start make the same rows."""
    # The course's name too: two demo courses of one seed get ids of their own.
    rng = random.Random(f"{seed}:{course_slug}")
    begin = start or _three_weeks_ago()
    class_ = [(f"student-{n:04d}", rng.betavariate(2.5, 1.6)) for n in range(1, students + 1)]
    with database.session() as session:
        course_id = course_named(session, course_slug).id
    written = 0
    exercises = list(catalog)
    gap = min(_RELEASE_GAP, _LAST_RELEASE / max(1, len(exercises) - 1))
    for index, exercise in enumerate(exercises):
        term = _Term(begin + index * gap, fixed_late=index == 0)
        # Fewer students try each later exercise: down to 79% of the class for the last.
        reach = 0.97 - 0.18 * index / max(1, len(exercises) - 1)
        model = _ExerciseModel(exercise, term, reach, random.Random(f"{seed}:{exercise.spec.slug}"))
        for first in range(0, len(class_), _STUDENTS_PER_BATCH):
            batch = class_[first : first + _STUDENTS_PER_BATCH]
            rows = _rows(model, batch, rng, attempts, staff=first == 0)
            written += _store(database, course_id, model, rows)
    return written


def _three_weeks_ago() -> datetime:
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - TERM


@dataclass(frozen=True)
class _Term:
    """When an exercise was handed out, and which version graded a report made at a time."""

    release: datetime
    fixed_late: bool

    def version(self, exercise: Exercise, at: datetime) -> str:
        if self.fixed_late and at < self.release + _FIXED_AFTER:
            return hashlib.sha256(exercise.version.encode()).hexdigest()[: len(exercise.version)]
        return exercise.version


@dataclass(frozen=True)
class _Row:
    id: str
    student_id: str | None
    at: datetime
    attempt: Attempt
    version: str
    source: str


class _ExerciseModel:
    """One exercise as the class meets it: its wrong solutions, and how often each is held."""

    def __init__(self, exercise: Exercise, term: _Term, reach: float, rng: random.Random) -> None:
        self.exercise = exercise
        self.term = term
        self.reach = reach  # the share of the class that tries it
        self.mistakes = known_mistakes(exercise)
        tests = [test.name for test in exercise.spec.tests]
        self.known = [self._known_bug(code, tests, rng) for code in self.mistakes]
        self.unknown = [self._unknown_bug(n, tests, rng) for n in range(_UNKNOWN_BUGS)]
        self.sources = _sources(exercise)
        self._reports: dict[tuple[Attempt, str], tuple[dict[str, Any], list[dict[str, Any]]]] = {}

    def _known_bug(self, code: str, tests: list[str], rng: random.Random) -> Bug:
        # A mistake that changes nothing on a small case (one head, one token) passes it.
        spared = rng.choice((0, 0, 1, 2, 4))
        broken = {Property.CAUSAL} if "causal" in code or "queries" in code else set()
        broken |= {Property.BATCH_INDEPENDENT} if "batch" in code else set()
        wanted = set(self.exercise.spec.properties)
        return Bug(
            code, frozenset(rng.sample(tests, len(tests) - spared)), frozenset(broken & wanted)
        )

    def _unknown_bug(self, n: int, tests: list[str], rng: random.Random) -> Bug:
        hidden = [t.name for t in self.exercise.spec.tests if t.visibility is Visibility.HIDDEN]
        if n < 3:  # right in general, wrong at an edge that only hidden tests reach
            failed = frozenset(rng.sample(hidden, 1 + n % 2))
            return Bug(None, failed, unexplained=Unexplained.EDGE)
        if n == 3:  # right on some shapes only
            failed = frozenset(rng.sample(tests, len(tests) // 2))
            return Bug(None, failed, unexplained=Unexplained.SCALED)
        crashes = n == 5
        wanted = set(self.exercise.spec.properties) & {Property.BATCH_INDEPENDENT}
        broken = frozenset(wanted) if n == 4 else frozenset()
        kind = Unexplained.CRASH if crashes else Unexplained.BATCH_MIXED
        failed = frozenset(rng.sample(tests, len(tests) - n % 2))
        return Bug(None, failed, broken, crashes, kind)

    def bugs_of(self, rng: random.Random, skill: float) -> list[Bug]:
        """The mistakes one student makes on the way, in the order they fix them."""
        bugs = [
            bug
            for rank, bug in enumerate(self.known)
            if rng.random() < 0.4 / (rank + 1) * (1.3 - skill)
        ]
        if rng.random() < 0.35 * (1.2 - skill):
            bugs.append(rng.choice(self.unknown))
        rng.shuffle(bugs)
        return bugs

    def attempts(self, rng: random.Random, skill: float, limit: int) -> list[Attempt]:
        """One student's submissions, in order."""
        bugs = self.bugs_of(rng, skill)
        patience = rng.randint(min(3, limit), limit)
        made: list[Attempt] = []
        while len(made) < limit:
            chance = rng.random()
            if chance < 0.01:
                made.append(Outcome.FAULT)
            elif Outcome.PASSED in made:  # tidying up after a pass: now and then a regression
                made.append(rng.choice(self.unknown[:3]) if chance < 0.04 else Outcome.PASSED)
                if rng.random() < 0.08:
                    break
            elif chance < 0.05 and len(made) < 3:
                made.append(Outcome.REFUSED)
            elif bugs:
                made.append(bugs[0])
                if rng.random() < 0.08 + 0.35 * skill:
                    bugs.pop(0)
                if len(made) >= patience:
                    break
            else:
                made.append(Outcome.PASSED)
        return made

    def stored(self, attempt: Attempt, version: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The submission's columns and outcome rows (without its id) for this report."""
        key = (attempt, version)
        if key not in self._reports:
            report = build_report(self.exercise, attempt, version, self.mistakes)
            self._reports[key] = (report_columns(report), outcome_rows("", report))
        return self._reports[key]

    def source(self, attempt: Attempt, rng: random.Random) -> str:
        kind = (attempt.finding or "") if isinstance(attempt, Bug) else attempt
        candidates = self.sources.get(kind) or [self.exercise.starter]
        return rng.choice(candidates)


def _sources(exercise: Exercise) -> dict[str, list[str]]:
    """Students' code from the exercise's folder: its solutions, and its mistakes by the
    finding each must get."""
    folder = exercise.folder
    solutions = [path.read_text() for path in sorted(folder.glob("solutions/*.py"))]
    sources: dict[str, list[str]] = {Outcome.PASSED: solutions, Outcome.FAULT: solutions}
    sources[Outcome.REFUSED] = ["import os\n\n" + exercise.starter]
    index = folder / "mistakes" / "mistakes.toml"
    if index.is_file():
        for name, entry in tomllib.loads(index.read_text()).items():
            path = folder / "mistakes" / f"{name}.py"
            if path.is_file():
                sources.setdefault(entry.get("diagnosis", ""), []).append(path.read_text())
    return sources


def _rows(
    model: _ExerciseModel,
    batch: list[tuple[str, float]],
    rng: random.Random,
    attempts: int,
    *,
    staff: bool,
) -> Iterator[_Row]:
    exercise, term = model.exercise, model.term
    tries: list[tuple[str | None, datetime, Attempt]] = []
    if staff:
        tries += [
            (None, term.release - timedelta(hours=20 - n), Outcome.PASSED)
            for n in range(_STAFF_TRIES)
        ]
    for name, skill in batch:
        if rng.random() > model.reach:
            continue
        at = term.release + timedelta(hours=min(rng.expovariate(1 / 60), 24 * 12))
        for attempt in model.attempts(rng, skill, attempts):
            tries.append((name, at, attempt))
            # At least a second apart: ids (time first) keep each student's attempts in order.
            at += timedelta(seconds=30 + rng.expovariate(1 / 2400))
    for student, at, attempt in tries:
        yield _Row(
            id=_ulid(at, rng),
            student_id=student,
            at=at,
            attempt=attempt,
            version=term.version(exercise, at),
            source=model.source(attempt, rng),
        )


def _ulid(at: datetime, rng: random.Random) -> str:
    """An id of this moment, its random part drawn from `rng`: the same seed, the same ids."""
    milliseconds = int(at.timestamp() * 1000)
    return str(ULID.from_bytes(milliseconds.to_bytes(6, "big") + rng.randbytes(10)))


def _store(database: Database, course_id: int, model: _ExerciseModel, rows: Iterator[_Row]) -> int:
    submissions, outcomes = [], []
    for row in rows:
        columns, lines = model.stored(row.attempt, row.version)
        submissions.append(
            {
                "id": row.id,
                "course_id": course_id,
                "exercise": model.exercise.spec.slug,
                "student_id": row.student_id,
                "source": row.source,
                "status": SubmissionStatus.DONE,
                "attempts": 1,
                "created_at": row.at,
                "started_at": row.at + timedelta(seconds=1),
                "finished_at": row.at + timedelta(seconds=4),
                **columns,
            }
        )
        outcomes += [{**line, "submission_id": row.id} for line in lines]
    with database.session() as session:
        _insert(session, Submission.__tablename__, submissions)
        _insert(session, ReportOutcome.__tablename__, outcomes)
    return len(submissions)


def _insert(session: Session, table: str, rows: list[dict[str, Any]]) -> None:
    """The rows in one executemany of a Core INSERT: no ORM bookkeeping per row. (A multi-row
    VALUES, or RETURNING's pages, cost more here: SQLAlchemy compiles, and psycopg parses, each
    long statement anew.)"""
    if rows:
        session.execute(insert(Base.metadata.tables[table]), rows)
