"""Reading an LMS course's roster: LTI Names and Role Provisioning Services 2.0, over HTTP.

    read_roster   every page of the membership container at the context's memberships URL,
                  with the access token the platform granted for MEMBERSHIPS_SCOPE

A page's `Link: <...>; rel="next"` names the next one; the last has none. Each page's URL is
checked by the SSRF policy (app.core.callback_urls) and fetched at the address it checked: the
URL comes from a launch, signed by the platform, but any course's instructor may shape what
their LMS sends. A 429 is waited out as its Retry-After says, a few times and never for long
(`Pacing`); past that the read fails and the outbox tries again later, from the first page.

    RosterUnreadable     the read failed; `permanent` when trying again cannot help (a URL refused,
                         a body that is not a roster)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin

import httpx

from app.core.callback_urls import CallbackPolicy, CallbackRefused, CallbackUnresolved, pinned
from app.lti.adapters import HTTP_TIMEOUT_S
from app.lti.models import MAX_CONTEXT_TEXT, MAX_USER_ID, MemberStatus

NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
MEMBERSHIPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
MEMBERSHIPS_MEDIA_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"


class RosterUnreadable(Exception):
    def __init__(
        self, error: str, status_code: int | None = None, *, permanent: bool = False
    ) -> None:
        super().__init__(error)
        self.status_code = status_code
        self.permanent = permanent


@dataclass(frozen=True)
class Member:
    user_id: str
    name: str
    roles: tuple[str, ...]
    status: MemberStatus


@dataclass(frozen=True)
class Pacing:
    """How far a read goes: pages at most (a platform that links pages in a circle ends), and
    how a 429 is waited out (waits per page, and the longest Retry-After waited)."""

    max_pages: int = 500
    waits_per_page: int = 3
    max_wait_s: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep)


def read_roster(
    client: httpx.Client, policy: CallbackPolicy, url: str, token: str, pacing: Pacing
) -> list[Member]:
    """Every member of every page, in the order the platform listed them."""
    members: list[Member] = []
    next_url: str | None = url
    pages = 0
    while next_url is not None:
        pages += 1
        if pages > pacing.max_pages:
            raise RosterUnreadable(f"the roster runs past {pacing.max_pages} pages", permanent=True)
        response = _page(client, policy, next_url, token, pacing)
        members.extend(_members(response))
        link = response.links.get("next", {}).get("url")
        next_url = urljoin(next_url, link) if link else None
    return members


def _page(
    client: httpx.Client, policy: CallbackPolicy, url: str, token: str, pacing: Pacing
) -> httpx.Response:
    waits = 0
    response = _get(client, policy, url, token)
    while response.status_code == 429 and waits < pacing.waits_per_page:
        wait = retry_after_s(response.headers.get("Retry-After"))
        if wait > pacing.max_wait_s:
            raise RosterUnreadable(f"HTTP 429: the platform asks to wait {wait:g} s", 429)
        pacing.sleep(wait)
        waits += 1
        response = _get(client, policy, url, token)
    if not response.is_success:
        raise RosterUnreadable(f"HTTP {response.status_code}", response.status_code)
    return response


def _get(client: httpx.Client, policy: CallbackPolicy, url: str, token: str) -> httpx.Response:
    try:
        target = pinned(url, policy.check(url))
    except CallbackUnresolved as unresolved:
        raise RosterUnreadable(str(unresolved)) from None
    except CallbackRefused as refused:
        raise RosterUnreadable(f"refused: {refused}", permanent=True) from None
    try:
        return client.get(
            target.url,
            headers={
                **target.headers,
                "Accept": MEMBERSHIPS_MEDIA_TYPE,
                "Authorization": f"Bearer {token}",
                "User-Agent": "autograder-lti",
            },
            extensions=target.extensions,
            timeout=HTTP_TIMEOUT_S,
            follow_redirects=False,
        )
    except httpx.HTTPError as failure:
        raise RosterUnreadable(f"{type(failure).__name__}: {failure}") from None


def retry_after_s(value: str | None) -> float:
    """Seconds a Retry-After asks for (delta-seconds or an HTTP date); 1 when absent or
    unreadable, so a 429 is never retried at once."""
    if value is None:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 1.0
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _members(response: httpx.Response) -> list[Member]:
    try:
        body = response.json()
    except ValueError:
        raise RosterUnreadable("the roster page is not JSON", permanent=True) from None
    listed = body.get("members") if isinstance(body, dict) else None
    if not isinstance(listed, list):
        raise RosterUnreadable("the roster page has no list of members", permanent=True)
    return [_member(entry) for entry in listed]


def _member(entry: Any) -> Member:
    user_id = entry.get("user_id") if isinstance(entry, dict) else None
    if not isinstance(user_id, str) or not 0 < len(user_id) <= MAX_USER_ID:
        raise RosterUnreadable(
            f"a member's user_id is not a string of 1 to {MAX_USER_ID} characters", permanent=True
        )
    roles = entry.get("roles", [])
    if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
        raise RosterUnreadable(f"member {user_id!r}: roles are not strings", permanent=True)
    try:
        status = MemberStatus(entry.get("status", MemberStatus.ACTIVE))
    except ValueError:
        raise RosterUnreadable(f"member {user_id!r}: unknown status", permanent=True) from None
    name = entry.get("name")
    shown = "".join(c for c in name if c.isprintable()) if isinstance(name, str) else ""
    return Member(user_id, shown[:MAX_CONTEXT_TEXT], tuple(roles), status)
