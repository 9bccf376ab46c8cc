"""A student link's row (app.access.student_links): the service's own way in for students."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import Base, UTCDateTime, utcnow


class StudentLink(Base):
    """A student's way in without an LMS (app.access.student_links): the signed token names this
    row, so revoking the row (or its expiry) ends the token."""

    __tablename__ = "student_links"
    __table_args__ = (Index("ix_student_links_course_student", "course_id", "student_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    student_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
