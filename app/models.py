"""Storage models (SQLAlchemy 2, typed). Wire schemas live beside each resource's routes.

The schema is owned by the Alembic migrations in `app/migrations`; a test checks that the two
agree, so a model change without a migration fails.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine
from ulid import ULID

# Named constraints, so migrations can alter them on every backend (SQLite's batch mode needs it).
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    """A ULID: unique, and sorted by creation time, so history pages by id."""
    return str(ULID())


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC, also on SQLite (which stores it naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


# Text no database can hold in a JSON document: PostgreSQL's JSONB refuses NUL (\u0000), and
# both backends refuse lone surrogates, which no UTF-8 can encode.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# As grader.text.REPLACEMENT: the reader sees that something was there.
_REPLACEMENT = "\ufffd"


# What JSON text shows of an unstorable character (`json.dumps(..., ensure_ascii=False)` writes
# NUL as an escape and keeps a lone surrogate as it is); a backslash before "u0000" may also
# match, which only costs the full walk.
_UNSTORABLE_JSON = re.compile(r"\\u0000|[\ud800-\udfff]")


def storable(value: Any) -> Any:
    """`value` (JSON data) with every unstorable character in its strings and keys replaced."""
    # Nearly every document has none: one pass of the C encoder tells, and spares the walk.
    if not _UNSTORABLE_JSON.search(json.dumps(value, ensure_ascii=False)):
        return value
    return _replaced(value)


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return _UNSTORABLE.sub(_REPLACEMENT, value)
    if isinstance(value, dict):
        return {_replaced(key): _replaced(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    return value


class JSONDocument(TypeDecorator[Any]):
    """JSON (JSONB on PostgreSQL) that stores any document, whatever text a submission printed:
    the same document on every backend, never a write that fails on one of them."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return storable(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class SubmissionStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class OutboxStatus(StrEnum):
    """Where a message of the outbox (app.outbox) stands."""

    WAITING = "waiting"  # recorded before its submission is graded: not due yet
    PENDING = "pending"  # due: the sender makes attempts from `next_attempt_at` on
    DELIVERED = "delivered"
    SKIPPED = "skipped"  # nothing to send after all (an LTI score of an error report)
    FAILED = "failed"  # every attempt failed; kept for the operator to see


def stored_enum(enum: type[StrEnum]) -> Enum:
    # Stored as plain strings (no native PostgreSQL enum type to migrate when a value is added).
    return Enum(
        enum,
        native_enum=False,
        create_constraint=False,
        length=16,
        values_callable=lambda members: [member.value for member in members],
    )


class Role(StrEnum):
    """What an API key may do in its course (app.access)."""

    ADMIN = "admin"  # everything in its course, and managing keys and LMS platforms
    INSTRUCTOR = "instructor"  # every submission of its course, with the code
    SUBMITTER = "submitter"  # an integration: submits, and reads what it submitted


# The course that existing keys and submissions belong to, and the open loopback mode's.
DEFAULT_COURSE_ID = 1

# Student ids starting so come from an LMS launch (app.lti.launch), and from nowhere else.
LTI_STUDENTS = "lti:"


class Course(Base):
    __tablename__ = "courses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100))
    # SHA-256 of the key, hex: the key itself is shown once at creation and never stored.
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The key's first characters, so an operator can tell keys apart in logs and listings.
    prefix: Mapped[str] = mapped_column(String(16))
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    role: Mapped[Role] = mapped_column(stored_enum(Role))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class StudentLink(Base):
    """A student's way in without an LMS (app.student_links): the signed token names this row,
    so revoking the row (or its expiry) ends the token."""

    __tablename__ = "student_links"
    __table_args__ = (Index("ix_student_links_course_student", "course_id", "student_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    student_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Leased:
    """The columns of a row of work held under a lease (app.leases: a submission, a regrade): who
    answers for it while it is unfinished, and until when; nobody once the lease has expired."""

    if TYPE_CHECKING:  # each leased table's own columns, that app.leases reads
        id: Mapped[str]
        status: Mapped[Any]

    lease_holder: Mapped[str | None] = mapped_column(String(200))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Submission(Leased, Base):
    __tablename__ = "submissions"
    __table_args__ = (
        # A retried POST with the same Idempotency-Key (per API key) finds its first submission.
        UniqueConstraint("idempotency_scope", "idempotency_key"),
        Index("ix_submissions_student_exercise", "student_id", "exercise", "id"),
        Index("ix_submissions_exercise_id", "exercise", "id"),
        # A course's figures per exercise and student (app.staff), and attempt budgets.
        Index("ix_submissions_course_exercise_student", "course_id", "exercise", "student_id"),
    )

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    # Student ids, and who may see a submission, are scoped to its course.
    course_id: Mapped[int] = mapped_column(
        ForeignKey("courses.id", ondelete="CASCADE"), index=True, default=DEFAULT_COURSE_ID
    )
    exercise: Mapped[str] = mapped_column(String(100))
    # The exercise's version its report was graded with (grader.versions), once done.
    exercise_version: Mapped[str | None] = mapped_column(String(64))
    student_id: Mapped[str | None] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(Text)
    status: Mapped[SubmissionStatus] = mapped_column(
        stored_enum(SubmissionStatus), default=SubmissionStatus.QUEUED, index=True
    )
    # The grader's Report as JSON once done (grader.report.Report), and its figures as columns
    # for the course's statistics (app.report_store writes them together).
    report: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument)
    report_status: Mapped[str | None] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float)
    max_score: Mapped[float | None] = mapped_column(Float)
    # Whether it uses up one of the student's attempts (app.report_store.charges_attempt): true
    # until graded, then false for a pass and for a fault of the platform.
    charged: Mapped[bool] = mapped_column(Boolean, default=True)
    # Grading starts so far; bounded by settings.max_attempts.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    # The key's owner (API key id, or "open" when the service runs without keys) and the key.
    idempotency_scope: Mapped[str | None] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    # SHA-256 of the request that created it: the same key with another body is refused.
    request_hash: Mapped[str | None] = mapped_column(String(64))
    callback_url: Mapped[str | None] = mapped_column(String(2048))


class OutboxMessage:
    """The columns every kind of outbox message shares (app.outbox sends them)."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    status: Mapped[OutboxStatus] = mapped_column(
        stored_enum(OutboxStatus), default=OutboxStatus.PENDING, index=True
    )
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # When the sender may try next; also its claim on the message while it tries.
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class WebhookDelivery(OutboxMessage, Base):
    """One finished submission's POST to its callback_url, retried until it lands or gives up."""

    __tablename__ = "webhook_deliveries"

    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2048))
    # What happened (app.webhooks): "submission.done", or "submission.regraded" (app.regrades).
    event: Mapped[str] = mapped_column(String(32), default="submission.done")


class OutcomeKind(StrEnum):
    TEST = "test"  # a test's status
    FINDING = "finding"  # a diagnosed mistake (status "")
    PROPERTY = "property"  # a property check's status


class ReportOutcome(Base):
    """One line of a submission's current report, as a row: what the course's statistics count
    (app.staff) without reading any report's JSON. Rewritten with the report (app.report_store)."""

    __tablename__ = "report_outcomes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[OutcomeKind] = mapped_column(stored_enum(OutcomeKind))
    name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    # A test's visibility ("visible", "hidden"); None for findings and properties.
    visibility: Mapped[str | None] = mapped_column(String(16))


class PastReport(Base):
    """A report a submission had before it was graded again (a regrade), with the exercise's
    version that graded it: history, never shown as the submission's result."""

    __tablename__ = "past_reports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    exercise_version: Mapped[str | None] = mapped_column(String(64))
    report: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    report_status: Mapped[str | None] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float)
    max_score: Mapped[float | None] = mapped_column(Float)
    graded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    replaced_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The regrade that replaced it (app.regrades).
    regrade_id: Mapped[str | None] = mapped_column(ForeignKey("regrades.id", ondelete="SET NULL"))


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
    # An attempt budget (app.budgets): `attempts` per `window_s` seconds, refilled evenly (a
    # token bucket); None for none.
    attempts: Mapped[int | None] = mapped_column(Integer)
    window_s: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class RegradeStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"


class Regrade(Leased, Base):
    """Grading again an exercise's finished submissions in a course (all, or one student's),
    in id order, after `cursor`: resumable where it stopped (app.regrades), by one runner at a
    time, the one that holds its lease."""

    __tablename__ = "regrades"
    __table_args__ = (Index("ix_regrades_course_exercise", "course_id", "exercise"),)

    id: Mapped[str] = mapped_column(String(26), primary_key=True, default=new_id)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    exercise: Mapped[str] = mapped_column(String(100))
    student_id: Mapped[str | None] = mapped_column(String(200))
    # Why: "requested" (an instructor asked) or "new-version" (the exercise changed).
    reason: Mapped[str] = mapped_column(String(16))
    status: Mapped[RegradeStatus] = mapped_column(
        stored_enum(RegradeStatus), default=RegradeStatus.QUEUED, index=True
    )
    # The submissions it covers: finished ones with an id up to `last_id` when it was asked.
    last_id: Mapped[str | None] = mapped_column(String(26))
    total: Mapped[int] = mapped_column(Integer, default=0)
    graded: Mapped[int] = mapped_column(Integer, default=0)
    changed: Mapped[int] = mapped_column(Integer, default=0)
    # The last submission graded again: the regrade resumes after it.
    cursor: Mapped[str | None] = mapped_column(String(26))
    requested_by: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
