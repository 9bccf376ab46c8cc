"""The outbox's rows (app.outbox.sender): what every message shares, and webhook deliveries."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.core.models import Base, UTCDateTime, stored_enum, utcnow


class OutboxStatus(StrEnum):
    """Where a message of the outbox (app.outbox.sender) stands."""

    WAITING = "waiting"  # recorded before its submission is graded: not due yet
    PENDING = "pending"  # due: the sender makes attempts from `next_attempt_at` on
    DELIVERED = "delivered"
    SKIPPED = "skipped"  # nothing to send after all (an LTI score of an error report)
    FAILED = "failed"  # every attempt failed; kept for the operator to see


class OutboxMessage:
    """The columns every kind of outbox message shares (app.outbox.sender sends them)."""

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
    # What happened (app.outbox.webhooks): "submission.done", or "submission.regraded"
    # (app.regrades).
    event: Mapped[str] = mapped_column(String(32), default="submission.done")
