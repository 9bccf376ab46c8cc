"""pylti1p3 on Starlette: its request, cookie, session and redirect interfaces, and the login
store that adds the nonce-replay check it lacks.

pylti1p3 keeps the nonce in a server-side session and only checks that it was issued, so the same
id_token could be posted again. Here a login is a database row (state, nonce, expiry), and a
launch consumes it with one conditional UPDATE: a second launch with that nonce finds it used and
is refused, on any replica. pylti1p3's calls block (they fetch the platform's keys with
`requests`): callers run them in a worker thread, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import requests
from pylti1p3.cookie import CookieService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request
from pylti1p3.session import SessionService
from sqlalchemy import delete, select, update

from app.core.db import Database, changed_rows
from app.core.models import utcnow
from app.lti.models import LtiLogin
from app.outbox.sender import Undelivered

COOKIE_PREFIX = "lti1p3-"
# Expired logins deleted by each new login, at most: more than one login makes, so the table
# shrinks back to the logins in flight, and never a long delete in a login's request.
PURGE_BATCH = 100
# Every call to a platform (keys, token, scores) gives up after this many seconds.
HTTP_TIMEOUT_S = 10.0


class LtiRequest(Request):
    """The parameters of one login or launch request (query and form, already read)."""

    def __init__(self, params: dict[str, str], cookies: dict[str, str], secure: bool) -> None:
        self.params = params
        self.cookies = cookies
        self.secure = secure

    def is_secure(self) -> bool:
        return self.secure

    def get_param(self, key: str) -> str:
        return self.params.get(key, "")


@dataclass
class CookieToSet:
    name: str
    value: str
    max_age: int


@dataclass
class CookieJar(CookieService):
    """Reads the request's cookies; collects the ones to set on the response."""

    request: LtiRequest
    to_set: list[CookieToSet] = field(default_factory=list)

    def get_cookie(self, name: str) -> str | None:
        return self.request.cookies.get(COOKIE_PREFIX + name)

    def set_cookie(self, name: str, value: str | int, exp: int | None = 3600) -> None:
        self.to_set.append(CookieToSet(COOKIE_PREFIX + name, str(value), exp or 3600))


class LoginStore(SessionService):
    """pylti1p3's session service, kept in the database: the login's state and nonce at the
    login, consumed once at the launch."""

    def __init__(  # no server session
        self, database: Database, request: LtiRequest, ttl: timedelta
    ) -> None:
        self._database = database
        self._request = request
        self._ttl = ttl
        self._nonce: str | None = None

    def save_nonce(self, nonce: str) -> None:
        self._nonce = nonce  # stored with its state by save_state_params, called next

    def save_state_params(self, state: str, params: dict[str, object]) -> None:
        assert self._nonce is not None, "pylti1p3 saves the nonce before the state"
        now = utcnow()
        with self._database.session() as session:
            # An expired login can only be refused: its launch fails the same without its row.
            expired = select(LtiLogin.state).where(LtiLogin.expires_at < now).limit(PURGE_BATCH)
            session.execute(delete(LtiLogin).where(LtiLogin.state.in_(expired)))
            session.add(
                LtiLogin(
                    state=state,
                    nonce=self._nonce,
                    login_params={key: str(value) for key, value in params.items()},
                    expires_at=now + self._ttl,
                )
            )

    def check_nonce(self, nonce: str) -> bool:
        """True once per login: the nonce was issued with this state, in time, and not used."""
        now = utcnow()
        with self._database.session() as session:
            result = session.execute(
                update(LtiLogin)
                .where(
                    LtiLogin.state == self._request.get_param("state"),
                    LtiLogin.nonce == nonce,
                    LtiLogin.used_at.is_(None),
                    LtiLogin.expires_at > now,
                )
                .values(used_at=now)
                .execution_options(synchronize_session=False)
            )
        return changed_rows(result) == 1

    # The state is checked against its cookie, and launches are not cached for later requests.
    def check_state_is_valid(self, state: str, id_token_hash: str) -> bool:
        return False

    def set_state_valid(self, state: str, id_token_hash: str) -> None:
        pass

    def save_launch_data(self, key: str, jwt_body: Any) -> None:
        pass


class UrlRedirect(Redirect[str]):
    """pylti1p3's redirect, reduced to its URL: the route answers the redirect."""

    def __init__(self, location: str) -> None:
        self._location = location

    def do_redirect(self) -> str:
        return self._location

    def do_js_redirect(self) -> str:
        return self._location

    def set_redirect_url(self, location: str) -> None:
        self._location = location

    def get_redirect_url(self) -> str:
        return self._location


class TimeoutSession(requests.Session):
    """`requests` has no default timeout; a platform that hangs must not hold a thread forever."""

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", HTTP_TIMEOUT_S)
        return super().request(*args, **kwargs)


def http_session() -> requests.Session:
    session = TimeoutSession()
    session.headers["User-Agent"] = "autograder-lti"
    return session


@contextmanager
def lms_call(what: str = "") -> Iterator[None]:
    """An outbox attempt's call to the LMS: its failure (an error answer, or none) raised as the
    outbox's Undelivered, with `what` the call where an attempt makes more than one."""
    said = f"{what}: " if what else ""
    try:
        yield
    except LtiServiceException as failure:
        status = failure.response.status_code
        raise Undelivered(f"{said}HTTP {status}: {failure.response.text[:300]}", status) from None
    except (LtiException, requests.RequestException) as failure:
        raise Undelivered(f"{said}{type(failure).__name__}: {failure}") from None
