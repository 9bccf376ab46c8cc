"""Signed, expiring tokens the service hands out and later checks: HS256 with a key derived
from AUTOGRADER_SECRET per purpose, so any replica checks them and a token of one purpose is
never taken for another.

The purposes: `lti:session` and `lti:deep-link` (app.lti.sessions), `lti:staff`
(app.access.staff_sessions), `student-link` (app.access.student_links).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

import jwt

from app.core.settings import AppSettings

_ALGORITHM = "HS256"


class InvalidToken(Exception):
    """The token is malformed, forged, expired or of another purpose."""


class ExpiredToken(InvalidToken):
    """The token was good, and its time is up."""


def _key(settings: AppSettings, purpose: str) -> bytes:
    return hmac.new(settings.master_secret().encode(), purpose.encode(), hashlib.sha256).digest()


def sign(settings: AppSettings, purpose: str, claims: dict[str, Any], expires_at: float) -> str:
    """A token carrying `claims` until `expires_at` (a Unix time)."""
    body = {**claims, "iat": int(time.time()), "exp": int(expires_at)}
    return jwt.encode(body, _key(settings, purpose), _ALGORITHM)


def verify(settings: AppSettings, purpose: str, token: str) -> dict[str, Any]:
    """The claims of a token of this purpose, signed by this service and not expired."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token, _key(settings, purpose), algorithms=[_ALGORITHM], options={"require": ["exp"]}
        )
    except jwt.ExpiredSignatureError:
        raise ExpiredToken("expired") from None
    except jwt.InvalidTokenError as error:
        raise InvalidToken(str(error)) from None
    return claims
