"""Attempt budgets: an exercise's policy in a course (app.courses.models.ExercisePolicy) may give
each student `attempts` per `window_s` seconds, refilled evenly: a token bucket of `attempts` tokens
that gains one every `window_s / attempts` seconds.

What uses up an attempt is the submission's `charged` column
(app.grading.report_store.charges_attempt): every submission until it is graded, then only those
that did not pass and were not a fault of the platform. So a pass, a grader error or a time-out on
an overloaded machine gives its attempt back. The bucket is replayed from the student's charged
submissions, in the database every API replica shares, so no counter can drift from what was
submitted.

Course staff are never limited: they try exercises out.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, select, text
from sqlalchemy.orm import Session

from app.core.models import Submission
from app.courses.models import ExercisePolicy

# Token counts are sums of float refills: this much short of a whole attempt still counts as one.
_EPSILON = 1e-9
# The first key of the budget locks' advisory locks (PostgreSQL): "bdgt", apart from others.
_LOCK_SPACE = 0x62646774


@dataclass(frozen=True)
class Budget:
    attempts: int
    window_s: int

    @property
    def seconds_per_attempt(self) -> float:
        return self.window_s / self.attempts


@dataclass(frozen=True)
class Standing:
    """Where a student stands against a budget at one moment."""

    remaining: int  # whole attempts they may use now
    next_at: datetime | None  # when the next attempt comes back; None while the bucket is full


def standing(budget: Budget, charged: Sequence[datetime], now: datetime) -> Standing:
    """The student's standing at `now`, given when each charged submission was made (sorted,
    none after `now`). The bucket starts full before the first one."""
    tokens: float = budget.attempts
    last: datetime | None = None
    for moment in charged:
        if last is not None:
            tokens = _refilled(budget, tokens, moment - last)
        tokens -= 1  # below zero when a looser policy allowed the attempt: a debt to refill
        last = moment
    if last is not None:
        tokens = _refilled(budget, tokens, now - last)
    if tokens >= budget.attempts - _EPSILON:
        return Standing(budget.attempts, None)
    remaining = max(math.floor(tokens + _EPSILON), 0)
    wait_s = (remaining + 1 - tokens) * budget.seconds_per_attempt
    # Up to the microsecond: at `next_at` the attempt is there, never a rounding short of it.
    return Standing(remaining, now + timedelta(microseconds=math.ceil(wait_s * 1e6)))


def _refilled(budget: Budget, tokens: float, elapsed: timedelta) -> float:
    gained = elapsed.total_seconds() / budget.seconds_per_attempt
    return min(float(budget.attempts), tokens + gained)


def budget_of(session: Session, course_id: int, exercise: str) -> Budget | None:
    """The exercise's attempt budget in the course, or None when it has none."""
    return budget_in(session.get(ExercisePolicy, (course_id, exercise)))


def budget_in(policy: ExercisePolicy | None) -> Budget | None:
    """The attempt budget an exercise's policy row sets (None: it has no row, or no budget)."""
    if policy is None or policy.attempts is None or policy.window_s is None:
        return None
    return Budget(policy.attempts, policy.window_s)


def lock_student(session: Session, course_id: int, exercise: str, student_id: str) -> None:
    """Hold the student's budget lock on the exercise until the session's transaction ends:
    the count of their attempts and the insert of a new one, under it, are one step that
    concurrent requests take in turn (on every API replica).

    PostgreSQL: a transaction-level advisory lock on a hash of the three (two students whose
    hashes meet wait for each other, nothing worse). SQLite has one writer at a time: the
    caller inserts before it counts, and the insert holds the database's write lock until the
    commit."""
    if session.get_bind().dialect.name != "postgresql":
        return
    digest = hashlib.sha256(f"{course_id}\x00{exercise}\x00{student_id}".encode()).digest()
    key = int.from_bytes(digest[:4], "big", signed=True)
    session.execute(
        text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": _LOCK_SPACE, "key": key}
    )


def charged_times(
    session: Session,
    course_id: int,
    exercise: str,
    student_id: str,
    *,
    excluding: str | None = None,
    visible: ColumnElement[bool] | None = None,
) -> list[datetime]:
    """When the student's charged submissions to the exercise were made, oldest first: all of
    them, or those `visible` to a caller (app.access.rules), but for the submission `excluding`."""
    query = select(Submission.created_at).where(
        Submission.course_id == course_id,
        Submission.exercise == exercise,
        Submission.student_id == student_id,
        Submission.charged.is_(True),
    )
    if excluding is not None:
        query = query.where(Submission.id != excluding)
    if visible is not None:
        query = query.where(visible)
    return list(session.scalars(query.order_by(Submission.created_at)))


def used_up_message(budget: Budget, next_at: datetime) -> str:
    """Why a student may not submit now, and when they may, in their words."""
    return (
        f"you have used {_count(budget.attempts, 'attempt')} this exercise allows every "
        f"{_period(budget.window_s)}. The next one comes back at {next_at:%H:%M} UTC. "
        "Submissions that pass, and those the grader failed to grade, do not count."
    )


def _period(seconds: int) -> str:
    """ "hour", "2 hours", "90 minutes": a window in its largest whole unit."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds % size == 0:
            number = seconds // size
            return unit if number == 1 else f"{number} {unit}s"
    raise AssertionError("unreachable: every whole number of seconds divides by 1")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def standing_now(
    session: Session,
    course_id: int,
    exercise: str,
    student_id: str,
    now: datetime,
    *,
    visible: ColumnElement[bool] | None = None,
) -> tuple[Budget, Standing] | None:
    """The student's budget for the exercise and where they stand in it, counting every
    charged submission of theirs or those `visible` to the caller; None without a budget."""
    budget = budget_of(session, course_id, exercise)
    if budget is None:
        return None
    charged = charged_times(session, course_id, exercise, student_id, visible=visible)
    return budget, standing(budget, charged, now)
