"""The due date an LMS gives a launched exercise, read at each student's launch and kept per
course and exercise (app.courses.due_dates.set_lms_due_date), where it comes before the one
staff set in the exercise's policy.

    the line item   its endDateTime (AGS: GET the launch's line item, with a token for a line
                    item scope): the LMS's word, a date or none
    custom claim    where the line item cannot be read (no line item or no scope for it, the
                    platform refused or did not answer): the launch's custom parameter `due_at`,
                    which a platform fills from `$ResourceLink.submission.endDateTime` (deep
                    linking asks for it, app.lti.deep_linking)
    neither         nothing is known: the due date kept so far stays

A failure to read never fails the launch: the student still works, and the outcome is logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from app.api.api_process import ApiProcess
from app.lti.adapters import http_session
from app.lti.claims import GradeService
from app.lti.models import LtiPlatform
from app.lti.registrations import to_registration
from app.lti.tool_key import tool_key

log = logging.getLogger(__name__)

CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"
# What deep linking asks a platform to put in the custom parameter `due_at`.
DUE_AT_VARIABLE = "$ResourceLink.submission.endDateTime"
LINEITEM_SCOPES = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
)


@dataclass(frozen=True)
class LmsDueDate:
    """What the LMS says: a due date, or (None) that there is none."""

    due_at: datetime | None


def parsed(text: object) -> datetime | None:
    """An ISO 8601 moment with its offset, or None for anything else (a platform that left a
    substitution variable unfilled sends the variable itself)."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def lms_due_date(
    api: ApiProcess, platform: LtiPlatform, body: dict[str, Any], grades: GradeService
) -> LmsDueDate | None:
    """What the launch's LMS says of the exercise's due date; None when it cannot be told."""
    from_lineitem = _from_lineitem(api, platform, grades)
    if from_lineitem is not None:
        return from_lineitem
    custom = body.get(CUSTOM_CLAIM)
    due_at = parsed(custom.get("due_at")) if isinstance(custom, dict) else None
    return LmsDueDate(due_at) if due_at is not None else None


def _from_lineitem(
    api: ApiProcess, platform: LtiPlatform, grades: GradeService
) -> LmsDueDate | None:
    if grades.lineitem_url is None or not set(LINEITEM_SCOPES) & set(grades.scopes):
        return None
    registration = to_registration(platform, tool_key(api.database, api.settings))
    connector = ServiceConnector(registration, requests_session=http_session())
    service_data = {"scope": grades.scopes, "lineitem": grades.lineitem_url}
    ags = AssignmentsGradesService(connector, service_data)  # type: ignore[arg-type]
    try:
        end = ags.get_lineitem().get_end_date_time()
    except (LtiException, RequestException, ValueError) as failure:
        log.info("the line item's due date could not be read: %s", failure)
        return None
    return LmsDueDate(parsed(end))
