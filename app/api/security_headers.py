"""Security headers on every response: a Content-Security-Policy and `nosniff`.

Scripts run only from the service's own URLs (`script-src 'self'`: no inline script, no
`eval`), so text that slips into a page unescaped cannot run. The pages may be framed only by
the service itself, the registered LMS platforms (their issuers' and login URLs' origins, read
from the database and kept for PLATFORM_ORIGINS_TTL_S) and the origins of
AUTOGRADER_FRAME_ANCESTORS: an LMS embeds the exercise page, no other site may (clickjacking).
The app factory hands in how the platforms' origins are read (app.lti.registrations), so this
module knows nothing of LTI.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.api_process import ApiProcess
from app.core.settings import AppSettings

log = logging.getLogger(__name__)

# Platforms are registered rarely; a new one may frame the pages this much later.
PLATFORM_ORIGINS_TTL_S = 60.0

# Reads the registered platforms' origins, in one session of the service's database.
PlatformOrigins = Callable[[Session], set[str]]


class _FrameAncestors:
    """The frame-ancestors source list, the platforms' part refreshed once per TTL."""

    def __init__(self, configured: list[str], platform_origins: PlatformOrigins) -> None:
        self._configured = configured
        self._read_platform_origins = platform_origins
        self._value = self._join(set())
        self._read_at = float("-inf")

    async def get(self, api: ApiProcess | None) -> str:
        if api is None:  # not started (or stopping): no platform is known
            return self._join(set())
        if time.monotonic() - self._read_at >= PLATFORM_ORIGINS_TTL_S:
            self._read_at = time.monotonic()
            try:
                self._value = self._join(await run_in_threadpool(self._platform_origins, api))
            except (SQLAlchemyError, OSError):  # the last list stays; the database is /readyz's
                log.warning("cannot read the LTI platforms' origins", exc_info=True)
        return self._value

    def _platform_origins(self, api: ApiProcess) -> set[str]:
        with api.database.session() as session:
            return self._read_platform_origins(session)

    def _join(self, platforms: set[str]) -> str:
        return " ".join(["'self'", *sorted(platforms | set(self._configured))])


class SecurityHeaders:
    """ASGI middleware: sets the headers on every HTTP response, whatever route answers."""

    def __init__(
        self, app: ASGIApp, settings: AppSettings, platform_origins: PlatformOrigins
    ) -> None:
        self._app = app
        self._frame_ancestors = _FrameAncestors(settings.frame_ancestors, platform_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        api = getattr(scope["app"].state, "api", None)
        policy = (
            "script-src 'self'; object-src 'none'; base-uri 'none'; "
            f"frame-ancestors {await self._frame_ancestors.get(api)}"
        )

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = policy
                headers["X-Content-Type-Options"] = "nosniff"
            await send(message)

        await self._app(scope, receive, send_with_headers)
