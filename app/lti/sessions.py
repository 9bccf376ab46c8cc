"""Short-lived signed tokens that carry an LTI launch into the browser.

    LaunchSession   handed to the exercise page after a resource-link launch: the launch id
                    (student, line item), the exercise and the student id its submissions get.
                    The page sends it back as `Authorization: Bearer ...` to /lti/submissions.
    DeepLinkContext carried by the exercise picker's form: the platform, deployment and deep
                    linking settings of the instructor's launch.

Signed by app.access.signed_tokens, so any replica can check them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from app.access.auth import Principal, student_principal
from app.access.signed_tokens import InvalidToken, sign, verify
from app.core.settings import AppSettings


def _sign(settings: AppSettings, purpose: str, claims: dict[str, Any]) -> str:
    return sign(settings, f"lti:{purpose}", claims, time.time() + settings.lti_session_ttl_s)


@dataclass(frozen=True)
class LaunchSession:
    launch_id: str
    exercise: str
    student_id: str
    course_id: int  # the course of the platform that launched the student

    def principal(self) -> Principal:
        """The launched student, for app.access.rules."""
        return student_principal(self.course_id, self.student_id, f"lti:{self.launch_id}")

    def sign(self, settings: AppSettings) -> str:
        claims = {
            "lid": self.launch_id,
            "exercise": self.exercise,
            "student": self.student_id,
            "course": self.course_id,
        }
        return _sign(settings, "session", claims)

    @classmethod
    def verify(cls, settings: AppSettings, token: str) -> LaunchSession:
        claims = verify(settings, "lti:session", token)
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
        return _sign(settings, "deep-link", claims)

    @classmethod
    def verify(cls, settings: AppSettings, token: str) -> DeepLinkContext:
        claims = verify(settings, "lti:deep-link", token)
        try:
            return cls(int(claims["pid"]), str(claims["dep"]), dict(claims["dls"]))
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidToken(f"malformed deep-linking context: {error}") from None
