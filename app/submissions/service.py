"""What the submission routes do, apart from HTTP: accept (idempotently), look up, list."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, defer

from app.deps import Principal
from app.logs import bound_submission
from app.models import Submission
from app.problems import IdempotencyKeyReused, QueueFull, RateLimited
from app.services import Services
from app.submissions.schemas import SubmissionCreate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Accepted:
    submission: Submission
    replayed: bool  # an earlier request with the same Idempotency-Key made it


def request_hash(body: SubmissionCreate) -> str:
    canonical = json.dumps(body.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def accept(
    services: Services,
    principal: Principal,
    body: SubmissionCreate,
    idempotency_key: str | None,
) -> Accepted:
    """Store the submission (committed) and hand it to the dispatcher.

    Order: replay of an Idempotency-Key first (a retry is answered even when limits would bite),
    then rate limits (429), queue capacity (503), the insert, the hand-over. If the hand-over is
    refused the stored row is withdrawn, so a 503 leaves nothing behind.
    """
    digest = request_hash(body)
    if idempotency_key is not None:
        earlier = _replay(services, principal, idempotency_key, digest)
        if earlier is not None:
            return Accepted(earlier, replayed=True)
    _check_rate_limits(services, principal, body)
    dispatcher = services.dispatcher
    if dispatcher.depth() >= services.settings.queue_capacity:
        raise QueueFull(
            "the grading queue is full; retry later", services.settings.queue_retry_after_s
        )
    row = Submission(
        exercise=body.exercise,
        source=body.source,
        student_id=body.student_id,
        callback_url=str(body.callback_url) if body.callback_url else None,
        api_key_id=principal.key_id,
        idempotency_scope=principal.scope if idempotency_key else None,
        idempotency_key=idempotency_key,
        request_hash=digest,
    )
    try:
        with services.database.session() as session:
            session.add(row)
    except IntegrityError:  # a concurrent request with the same key stored it first
        if idempotency_key is None:
            raise
        earlier = _replay(services, principal, idempotency_key, digest)
        if earlier is None:
            raise
        return Accepted(earlier, replayed=True)
    with bound_submission(row.id):
        log.info("accepted for %s", row.exercise, extra={"student_id": row.student_id})
        try:
            dispatcher.submit(row.id)
        except QueueFull:
            with services.database.session() as session:
                session.execute(delete(Submission).where(Submission.id == row.id))
            log.info("withdrawn: the queue filled up")
            raise
    return Accepted(row, replayed=False)


def _replay(services: Services, principal: Principal, key: str, digest: str) -> Submission | None:
    with services.database.session() as session:
        earlier = session.scalars(
            select(Submission).where(
                Submission.idempotency_scope == principal.scope,
                Submission.idempotency_key == key,
            )
        ).one_or_none()
    if earlier is not None and earlier.request_hash != digest:
        raise IdempotencyKeyReused(
            "this Idempotency-Key was used with another request body; use a new key"
        )
    return earlier


def _check_rate_limits(services: Services, principal: Principal, body: SubmissionCreate) -> None:
    wait = services.key_limiter.acquire(principal.scope)
    if wait is not None:
        raise RateLimited(
            f"this client may submit {services.key_limiter.per_minute} times a minute", wait
        )
    if body.student_id is not None:
        wait = services.student_limiter.acquire(f"{principal.scope}|{body.student_id}")
        if wait is not None:
            raise RateLimited(
                f"student {body.student_id!r} may submit "
                f"{services.student_limiter.per_minute} times a minute",
                wait,
            )


def load(services: Services, submission_id: str) -> Submission | None:
    with services.database.session() as session:
        return session.get(Submission, submission_id)


def load_or(services: Services, submission: Submission) -> Submission:
    """The submission as stored now (the given one if it has gone since)."""
    return load(services, submission.id) or submission


def history(
    session: Session,
    *,
    student_id: str | None,
    exercise: str | None,
    cursor: str | None,
    limit: int,
) -> tuple[list[Submission], str | None]:
    """Newest first; `cursor` is the last id of the previous page (ids sort by creation)."""
    query = select(Submission).options(defer(Submission.source))  # a page shows no source
    if student_id is not None:
        query = query.where(Submission.student_id == student_id)
    if exercise is not None:
        query = query.where(Submission.exercise == exercise)
    if cursor is not None:
        query = query.where(Submission.id < cursor)
    rows = list(session.scalars(query.order_by(Submission.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].id if more and rows else None)
