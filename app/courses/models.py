"""A course's settings per exercise (app.courses.policies)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import Base, UTCDateTime, stored_enum, utcnow


class GradebookScore(StrEnum):
    """Which of a student's scores the gradebook takes, per exercise."""

    BEST = "best"
    LATEST = "latest"


class ExercisePolicy(Base):
    """A course's settings for one exercise; an exercise without a row takes the defaults (the
    best score counts, no attempt budget)."""

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
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
