"""Following a submission until its report: its state now, with its place in line while queued,
or, asked to wait (`?wait=S`), its state once graded or once the wait is over.

A wait holds no thread and no database connection: the request awaits the process's waiters
(app.grading.waiters), and reads the submission before and after in short sessions of its own.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app.access import rules as access
from app.access.auth import Principal
from app.api.api_process import ApiProcess
from app.api.deps import find_submission
from app.api.submission_schemas import QueuePlace, SubmissionPublic
from app.core.models import Submission, SubmissionStatus

# ?wait=S on a GET: answer once graded, or after S seconds (cut to AUTOGRADER_WAIT_TIMEOUT_S).
WaitDep = Annotated[
    float | None,
    Query(
        gt=0,
        le=600,
        description="seconds to hold the request until the submission is graded; answered "
        "at once when it is, and after these seconds (at most the service's wait timeout) "
        "with its state then",
    ),
]


def queue_place(api: ApiProcess, session: Session, submission: Submission) -> QueuePlace | None:
    place = api.line.place(session, submission)
    if place is None:
        return None
    return QueuePlace(position=place.position, estimate_s=place.estimate_s)


def state_now(api: ApiProcess, submission_id: str, principal: Principal) -> SubmissionPublic:
    """The submission as this caller may see it, with its place in line (a 404 if it may not)."""
    with api.database.session() as session:
        row = find_submission(session, submission_id, access.visible(principal))
        view = access.public_view(row, principal)
        return view.model_copy(update={"queue": queue_place(api, session, row)})


async def followed(
    api: ApiProcess, submission_id: str, principal: Principal, wait_s: float | None
) -> SubmissionPublic:
    """Its state now; with `wait_s`, once done or after that long (at most the service's
    AUTOGRADER_WAIT_TIMEOUT_S), whichever comes first."""
    view = await run_in_threadpool(state_now, api, submission_id, principal)
    if wait_s is None or view.status is SubmissionStatus.DONE:
        return view
    await api.waiters.wait(submission_id, min(wait_s, api.settings.wait_timeout_s))
    return await run_in_threadpool(state_now, api, submission_id, principal)
