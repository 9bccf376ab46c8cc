"""The signed token a staff launch (Instructor or Teaching Assistant, app.lti.roles) hands to the
course dashboard: the course's staff, for /v1's staff routes. app.access.auth takes it as a
credential, told from a key or a student link by STAFF_TOKEN_PREFIX.

Apart from app.lti.sessions because app.access.auth reads it, and those sessions build on
app.access.auth.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.access.signed_tokens import InvalidToken, sign, verify
from app.core.settings import AppSettings

STAFF_TOKEN_PREFIX = "agi_"
_PURPOSE = "lti:staff"


def is_staff_token(credential: str) -> bool:
    return credential.startswith(STAFF_TOKEN_PREFIX)


@dataclass(frozen=True)
class StaffSession:
    platform_id: int
    user_id: str  # the platform's `sub` of the instructor or TA
    course_id: int  # the course their LMS course is bound to
    # Their LMS course's row in lti_contexts (app.lti.contexts). Required: a session handed out
    # before launches were bound to LMS courses (any instructor of the platform got one) is void.
    context_row: int

    def sign(self, settings: AppSettings) -> str:
        claims = {
            "pid": self.platform_id,
            "sub": self.user_id,
            "course": self.course_id,
            "ctx": self.context_row,
        }
        expires_at = time.time() + settings.lti_session_ttl_s
        return STAFF_TOKEN_PREFIX + sign(settings, _PURPOSE, claims, expires_at)

    @classmethod
    def verify(cls, settings: AppSettings, token: str) -> StaffSession:
        claims = verify(settings, _PURPOSE, token.removeprefix(STAFF_TOKEN_PREFIX))
        try:
            return cls(
                int(claims["pid"]), str(claims["sub"]), int(claims["course"]), int(claims["ctx"])
            )
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidToken(f"malformed staff session: {error}") from None
