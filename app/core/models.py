"""Storage models (SQLAlchemy 2, typed) that every room stands on: the declarative base and its
column types, courses, API keys and submissions. Each concept's own tables live in its package
(app.access.models, app.courses.models, app.grading.models, app.outbox.models,
app.regrades.models, app.lti.models); wire schemas live beside each resource's routes.

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


def first_id_made_at(moment: datetime) -> str:
    """The least id of a row made at `moment` or later: ULIDs sort by the millisecond they were
    made in, so "made since" is a range of the primary key's index."""
    return str(ULID.from_int(int(moment.timestamp() * 1000) << 80))


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
    """What an API key may do in its course (app.access.rules)."""

    ADMIN = "admin"  # everything in its course, and managing keys and LMS platforms
    INSTRUCTOR = "instructor"  # every submission of its course, with the code
    SUBMITTER = "submitter"  # an integration: submits, and reads what it submitted


# The course that existing keys and submissions belong to, and the open loopback mode's.
DEFAULT_COURSE_ID = 1
DEFAULT_COURSE = "default"  # its slug (migration 0004 made it)

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


class Leased:
    """The columns of a row of work held under a lease (app.grading.leases: a submission, a
    regrade): who answers for it while it is unfinished, and until when; nobody once the lease
    has expired."""

    if TYPE_CHECKING:  # each leased table's own columns, that app.grading.leases reads
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
        # The line of queued submissions in grading order (app.grading.line).
        Index("ix_submissions_line", "status", "queue_rank", "id"),
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
    # for the course's statistics (app.grading.report_store writes them together).
    report: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument)
    report_status: Mapped[str | None] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float)
    max_score: Mapped[float | None] = mapped_column(Float)
    # Whether it uses up one of the student's attempts (app.grading.report_store.charges_attempt):
    # true until graded, then false for a pass and for a fault of the platform.
    charged: Mapped[bool] = mapped_column(Boolean, default=True)
    # Its rank in the line of queued submissions, set when it is accepted: graded in order of
    # (queue_rank, id), so a student's first submission goes before anyone's fifth of the same
    # minute (app.submissions.fair_order).
    queue_rank: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Grading starts so far; bounded by settings.max_attempts.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # When it was received (set at accept: app.submissions.service), and by how many days, whole
    # or begun, that was after the student's due date then (0: on time, or none): decided by
    # the receipt, never by the grading (app.courses.due_dates).
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    days_late: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    # The key's owner (API key id, or "open" when the service runs without keys) and the key.
    idempotency_scope: Mapped[str | None] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    # SHA-256 of the request that created it: the same key with another body is refused.
    request_hash: Mapped[str | None] = mapped_column(String(64))
    callback_url: Mapped[str | None] = mapped_column(String(2048))
