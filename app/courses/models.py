"""A course's settings per exercise (app.courses.policies), its students' extensions of a due
date (app.courses.due_dates), and the mistakes its staff named (app.courses.mistakes)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import Base, UTCDateTime, stored_enum, utcnow


class GradebookScore(StrEnum):
    """Which of a student's scores the gradebook takes, per exercise."""

    BEST = "best"
    LATEST = "latest"


class LatePolicy(StrEnum):
    """What a submission received after its due date gets (app.courses.due_dates)."""

    ACCEPT = "accept"  # graded in full, and marked late
    PENALTY = "penalty"  # marked late, and `penalty_per_day` percent off per day (or part) late
    CLOSE = "close"  # refused


class ExercisePolicy(Base):
    """A course's settings for one exercise; an exercise without a row takes the defaults (the
    best score counts, no attempt budget, no due date)."""

    __tablename__ = "exercise_policies"

    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), primary_key=True
    )
    exercise: Mapped[str] = mapped_column(String(100), primary_key=True)
    gradebook: Mapped[GradebookScore] = mapped_column(
        stored_enum(GradebookScore), default=GradebookScore.BEST
    )
    # An attempt budget (app.courses.budgets): `attempts` per `window_s` seconds, refilled evenly (a
    # token bucket); None for none.
    attempts: Mapped[int | None] = mapped_column(Integer)
    window_s: Mapped[int | None] = mapped_column(Integer)
    # The due date staff set, and what a late submission gets (app.courses.due_dates).
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    late_policy: Mapped[LatePolicy] = mapped_column(
        stored_enum(LatePolicy), default=LatePolicy.ACCEPT, server_default="accept"
    )
    penalty_per_day: Mapped[float | None] = mapped_column(Float)  # percent, with PENALTY
    # The due date the LMS gives (its line item's endDateTime, read at each launch): it comes
    # before `due_at`. None: the LMS gave none, or no launch read one yet.
    lms_due_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class DueExtension(Base):
    """A student's own due date for an exercise of the course, set by its staff: it replaces
    every other due date for that student."""

    __tablename__ = "due_extensions"

    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), primary_key=True
    )
    exercise: Mapped[str] = mapped_column(String(100), primary_key=True)
    student_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(UTCDateTime)
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class CourseMistake(Base):
    """A mistake a course's staff named from a group of wrong answers no known mistake explains
    (app.staff.naming): a failing report of the exercise in this course whose behaviour
    (grader.report.Behaviour) has `behaviour_key`, and that no other mistake explains, gets it as
    a finding (app.courses.mistakes), past and future ones alike."""

    __tablename__ = "course_mistakes"
    __table_args__ = (
        UniqueConstraint("course_id", "exercise", "behaviour_key"),
        UniqueConstraint("course_id", "exercise", "code"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    exercise: Mapped[str] = mapped_column(String(100))
    behaviour_key: Mapped[str] = mapped_column(String(200))
    code: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)  # what is wrong, in the student's terms
    fix: Mapped[str] = mapped_column(Text)  # what to change
    concepts: Mapped[list[str]] = mapped_column(JSON)  # tags of grader.concepts.CONCEPTS
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
