"""What the tool requires of an id_token's claims beyond pylti1p3's checks, and the claims of a
launch read into what is stored.

pylti1p3 verifies the signature and, through PyJWT, an `exp` that is there; it does not require
one, and with several audiences it takes the first as the client id. OIDC Core (3.1.3.7) asks
more: an expiry always, and an `azp` naming the client when `aud` is a list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pylti1p3.exception import LtiException

from app.core.models import LTI_STUDENTS
from app.lti.models import MAX_CONTEXT_TEXT, MAX_URL, MAX_USER_ID
from app.lti.pages import LaunchRefused, Remedy

AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"


def check_id_token(body: Mapping[str, object]) -> None:
    """Refuse an id_token without an expiry, or with several audiences and no `azp` among them
    (pylti1p3 then looks the registration up by `azp`, so an `azp` not ours finds none)."""
    if not isinstance(body.get("exp"), int | float):
        raise LtiException("the id_token has no expiry (exp)")
    audience = body.get("aud")
    if isinstance(audience, list):
        if body.get("azp") not in audience:
            raise LtiException("the id_token has several audiences and no azp among them")
    elif "azp" in body and body["azp"] != audience:
        raise LtiException("the id_token's azp is not its audience")


def client_id(body: Mapping[str, object]) -> str:
    """The client the id_token is for: its audience, or with several its `azp`."""
    audience = body.get("aud")
    return str(body.get("azp") if isinstance(audience, list) else audience)


@dataclass(frozen=True)
class GradeService:
    """The AGS claim: the line item scores go to (None: no passback) and the scopes granted."""

    lineitem_url: str | None
    scopes: list[str]


def _malformed(what: str) -> LaunchRefused:
    return LaunchRefused(
        f"the launch's {what}; the platform sent it malformed", remedy=Remedy.ASK_INSTRUCTOR
    )


def user_id(body: dict[str, Any]) -> str:
    sub = body.get("sub")
    if not sub:
        raise LaunchRefused(
            "the launch names no user (anonymous launch)", remedy=Remedy.ASK_INSTRUCTOR
        )
    if not isinstance(sub, str) or len(sub) > MAX_USER_ID:
        raise _malformed(f"user id (sub) is not a string of at most {MAX_USER_ID} characters")
    return sub


def student_id(platform_id: int, sub: str) -> str:
    """The student id an LTI user's submissions get (a launch's `sub`, a roster member's
    `user_id`): stable per platform and user."""
    if len(sub) > 160 or not sub.isprintable():
        sub = hashlib.sha256(sub.encode()).hexdigest()
    return f"{LTI_STUDENTS}{platform_id}:{sub}"


def grade_service(body: dict[str, Any]) -> GradeService:
    ags = body.get(AGS_CLAIM)
    if ags is None:  # no grade service granted: the student still works
        return GradeService(None, [])
    if not isinstance(ags, dict):
        raise _malformed("grade service claim (AGS) is not an object")
    lineitem = ags.get("lineitem")
    if lineitem is not None and (not isinstance(lineitem, str) or len(lineitem) > MAX_URL):
        raise _malformed(f"line item is not a URL of at most {MAX_URL} characters")
    scopes = ags.get("scope", [])
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        raise _malformed("grade service scopes are not a list of strings")
    return GradeService(lineitem, scopes)


@dataclass(frozen=True)
class LmsCourse:
    """The LMS course a launch comes from: its deployment and context claims. The title and the
    label are the LMS's words (its instructors'), kept printable and cut to their columns."""

    deployment_id: str
    context_id: str
    title: str
    label: str


def _shown(text: object) -> str:
    """Text an operator's terminal and a tab-separated table show as it is."""
    if not isinstance(text, str):
        return ""
    return "".join(char if char.isprintable() else "?" for char in text)[:MAX_CONTEXT_TEXT]


def lms_course(body: dict[str, Any]) -> LmsCourse:
    """The launch's LMS course; a launch that names none (no context claim, or one without an
    id) is refused: which of our courses it belongs to could not be told."""
    context = body.get(CONTEXT_CLAIM)
    if context is None:
        raise LaunchRefused(
            "the launch names no LMS course (no context claim); the tool serves launches from "
            "within a course only",
            remedy=Remedy.ASK_INSTRUCTOR,
        )
    if not isinstance(context, dict):
        raise _malformed("context claim is not an object")
    context_id = context.get("id")
    if not isinstance(context_id, str) or not 0 < len(context_id) <= MAX_CONTEXT_TEXT:
        raise _malformed(f"context id is not a string of 1 to {MAX_CONTEXT_TEXT} characters")
    if not context_id.isprintable():
        raise _malformed("context id holds unprintable characters")
    return LmsCourse(
        str(body.get(DEPLOYMENT_CLAIM, "")),
        context_id,
        _shown(context.get("title")),
        _shown(context.get("label")),
    )
