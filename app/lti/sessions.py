"""Short-lived signed tokens that carry an LTI launch into the browser.

    LaunchSession   handed to the exercise page after a resource-link launch: the launch id
                    (student, line item), the exercise and the student id its submissions get.
                    The page sends it back as `Authorization: Bearer ...` to /lti/submissions.
    DeepLinkContext carried by the exercise picker's form: the platform, deployment and deep
                    linking settings of the instructor's launch.

HS256 with a key derived from AUTOGRADER_SECRET, so any replica can check them.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any

import jwt

from app.settings import AppSettings

_ALGORITHM = "HS256"


class InvalidToken(Exception):
    """The token is malformed, forged, expired or of another kind."""


def _key(settings: AppSettings, purpose: str) -> bytes:
    return hmac.new(
        settings.master_secret().encode(), f"lti:{purpose}".encode(), hashlib.sha256
    ).digest()


def _sign(settings: AppSettings, purpose: str, claims: dict[str, Any], ttl_s: float) -> str:
    now = int(time.time())
    return jwt.encode(
        {**claims, "iat": now, "exp": now + int(ttl_s)}, _key(settings, purpose), _ALGORITHM
    )


def _verify(settings: AppSettings, purpose: str, token: str) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(token, _key(settings, purpose), algorithms=[_ALGORITHM])
    except jwt.InvalidTokenError as error:
        raise InvalidToken(str(error)) from None
    return claims


@dataclass(frozen=True)
class LaunchSession:
    launch_id: str
    exercise: str
    student_id: str
    course_id: int  # the course of the platform that launched the student

    def sign(self, settings: AppSettings) -> str:
        claims = {
            "lid": self.launch_id,
            "exercise": self.exercise,
            "student": self.student_id,
            "course": self.course_id,
        }
        return _sign(settings, "session", claims, settings.lti_session_ttl_s)

    @classmethod
    def verify(cls, settings: AppSettings, token: str) -> LaunchSession:
        claims = _verify(settings, "session", token)
        try:
            return cls(
                str(claims["lid"]),
                str(claims["exercise"]),
                str(claims["student"]),
                int(claims["course"]),
            )
        except KeyError as missing:
            raise InvalidToken(f"no {missing} claim") from None


@dataclass(frozen=True)
class DeepLinkContext:
    platform_id: int
    deployment_id: str
    settings: dict[str, Any]  # the launch's deep_linking_settings claim

    def sign(self, settings: AppSettings) -> str:
        claims = {"pid": self.platform_id, "dep": self.deployment_id, "dls": self.settings}
        return _sign(settings, "deep-link", claims, settings.lti_session_ttl_s)

    @classmethod
    def verify(cls, settings: AppSettings, token: str) -> DeepLinkContext:
        claims = _verify(settings, "deep-link", token)
        try:
            return cls(int(claims["pid"]), str(claims["dep"]), dict(claims["dls"]))
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidToken(f"malformed deep-linking context: {error}") from None
