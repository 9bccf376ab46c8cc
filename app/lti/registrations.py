"""Platform registrations: stored rows (`autograder lti add-platform`), and pylti1p3's tool
configuration read from them."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from pylti1p3.deployment import Deployment
from pylti1p3.registration import Registration
from pylti1p3.tool_config.abstract import ToolConfAbstract
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.commands import CommandRefused
from app.core.db import Database
from app.core.settings import ORIGIN_PATTERN, is_loopback_host
from app.courses.registry import course_named
from app.lti.adapters import LtiRequest
from app.lti.models import ContextPolicy, LtiPlatform
from app.lti.tool_key import ToolKey


class RegistrationError(CommandRefused):
    """A registration that cannot be stored as given; the message says why."""


def is_lms_url(url: object) -> bool:
    """Whether `url` may be an LMS endpoint: https, or http on a loopback host (a platform on
    this machine); never `javascript:` and the like."""
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    if not host:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback_host(host))


def checked_url(what: str, url: str) -> str:
    if not is_lms_url(url):
        raise RegistrationError(
            f"{what} must be an https:// URL (http:// only on loopback): {url!r}"
        )
    return url


def add_platform(  # noqa: PLR0917 (each is a field of the registration)
    session: Session,
    issuer: str,
    client_id: str,
    deployment_ids: list[str],
    auth_login_url: str,
    auth_token_url: str,
    key_set_url: str,
    *,
    course: str = "default",
    context_policy: ContextPolicy = ContextPolicy.BOUND,
) -> LtiPlatform:
    """Store a registration, or update the one with this issuer and client id. Its launches go
    to the courses their LMS courses are bound to (app.lti.contexts): `course` is the one an
    operator binds to unless told otherwise; `context_policy` says what an LMS course bound to
    none gets."""
    for what, url in (
        ("the issuer", issuer),
        ("the authorization URL", auth_login_url),
        ("the token URL", auth_token_url),
        ("the key set URL", key_set_url),
    ):
        checked_url(what, url)
    course_id = course_named(session, course).id
    row = session.scalars(
        select(LtiPlatform).where(LtiPlatform.issuer == issuer, LtiPlatform.client_id == client_id)
    ).one_or_none()
    if row is None:
        row = LtiPlatform(issuer=issuer, client_id=client_id)
        session.add(row)
    row.course_id = course_id
    row.context_policy = context_policy
    row.deployment_ids = sorted(set(deployment_ids))
    row.auth_login_url = auth_login_url
    row.auth_token_url = auth_token_url
    row.key_set_url = key_set_url
    session.flush()
    return row


def list_platforms(session: Session) -> list[LtiPlatform]:
    return list(session.scalars(select(LtiPlatform).order_by(LtiPlatform.id)))


def remove_platform(session: Session, platform_id: int) -> LtiPlatform:
    """Forget a registration, its launches and their pending score posts."""
    row = session.get(LtiPlatform, platform_id)
    if row is None:
        raise RegistrationError(
            f"no platform has id {platform_id}; `autograder lti platforms list`"
        )
    session.delete(row)
    return row


def find_platform(session: Session, issuer: str, client_id: str | None) -> LtiPlatform | None:
    """The registration of this issuer and client id; without a client id (some platforms
    leave it out of the login request), the issuer's only one."""
    query = select(LtiPlatform).where(LtiPlatform.issuer == issuer)
    if client_id:
        query = query.where(LtiPlatform.client_id == client_id)
    rows = list(session.scalars(query.limit(2)))
    return rows[0] if len(rows) == 1 else None


def platform_origins(session: Session) -> set[str]:
    """The origins the registered platforms show the tool from: their issuers' and login URLs'
    (an LMS page that frames the tool is on one of them)."""
    urls = session.execute(select(LtiPlatform.issuer, LtiPlatform.auth_login_url))
    origins = set()
    for url in (url for pair in urls for url in pair):
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if re.fullmatch(ORIGIN_PATTERN, origin):
            origins.add(origin)
    return origins


def to_registration(platform: LtiPlatform, key: ToolKey) -> Registration:
    return (
        Registration()
        .set_issuer(platform.issuer)
        .set_client_id(platform.client_id)
        .set_auth_login_url(platform.auth_login_url)
        .set_auth_token_url(platform.auth_token_url)
        .set_key_set_url(platform.key_set_url)
        .set_tool_private_key(key.private_pem)
        .set_tool_public_key(key.public_pem)
    )


class DatabaseToolConf(ToolConfAbstract[LtiRequest]):
    """pylti1p3's view of the registrations: every issuer may have several client ids."""

    def __init__(self, database: Database, key: ToolKey) -> None:
        self._database = database
        self._key = key

    def check_iss_has_one_client(self, iss: str) -> bool:
        return False

    def check_iss_has_many_clients(self, iss: str) -> bool:
        return True

    def _platform(self, iss: str, client_id: str | None) -> LtiPlatform | None:
        with self._database.session() as session:
            return find_platform(session, iss, client_id)

    def find_registration_by_issuer(self, iss: str, *args: Any, **kwargs: Any) -> Registration:
        return self.find_registration_by_params(iss, "", *args, **kwargs)

    def find_registration_by_params(
        self, iss: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Registration:
        platform = self._platform(iss, client_id or None)
        # pylti1p3 refuses the login or launch itself when this is None.
        return to_registration(platform, self._key) if platform else None  # type: ignore[return-value]

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment | None:
        return self.find_deployment_by_params(iss, deployment_id, "")

    def find_deployment_by_params(
        self, iss: str, deployment_id: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Deployment | None:
        platform = self._platform(iss, client_id or None)
        if platform is None or deployment_id not in platform.deployment_ids:
            return None
        return Deployment().set_deployment_id(deployment_id)
