"""The roster reader's edges, against a transport that plays the platform: each page's URL is
checked (a next page on an internal address is refused), a 429 is waited out within bounds,
and pages that never end, redirects and malformed members end the read with a reason."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from app.core.callback_urls import CallbackPolicy, IPAddress
from app.lti.models import MemberStatus
from app.lti.nrps import Pacing, RosterUnreadable, read_roster, retry_after_s

URL = "https://lms.test/nrps"
PUBLIC = ipaddress.ip_address("93.184.216.34")
ADA: dict[str, object] = {"user_id": "u1", "name": "Ada\x1b[31m", "roles": ["Learner"]}


def resolve(host: str) -> list[IPAddress]:
    return [PUBLIC] if host == "lms.test" else [ipaddress.ip_address("10.0.0.9")]


def reader(
    answer: Callable[[httpx.Request], httpx.Response], pacing: Pacing | None = None
) -> list[httpx.Request]:
    """Read the roster from `answer`; returns the requests it got."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request)

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        read_roster(client, CallbackPolicy(resolve=resolve), URL, "token", pacing or Pacing())
    return seen


def page(*members: dict[str, object], next_url: str | None = None) -> httpx.Response:
    headers = {"Link": f'<{next_url}>; rel="next"'} if next_url else {}
    return httpx.Response(200, json={"members": list(members)}, headers=headers)


def test_a_page_is_asked_at_the_checked_address_with_the_token() -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return page(ADA)

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        (member,) = read_roster(client, CallbackPolicy(resolve=resolve), URL, "t0k", Pacing())
    (request,) = requests
    assert (request.url.host, request.headers["host"]) == (str(PUBLIC), "lms.test")
    assert request.headers["authorization"] == "Bearer t0k"
    assert (member.name, member.status) == ("Ada[31m", MemberStatus.ACTIVE)  # made printable


def test_a_next_page_on_an_internal_address_is_refused() -> None:
    with pytest.raises(RosterUnreadable, match=r"10\.0\.0\.9") as refused:
        reader(lambda request: page(ADA, next_url="https://intranet.test/nrps?p=2"))
    assert refused.value.permanent


def test_a_429_is_waited_out_a_few_times_then_given_up() -> None:
    waits: list[float] = []
    pacing = Pacing(waits_per_page=2, sleep=waits.append)
    with pytest.raises(RosterUnreadable, match="HTTP 429") as limited:
        reader(lambda request: httpx.Response(429, headers={"Retry-After": "2"}), pacing)
    assert waits == [2.0, 2.0]
    assert not limited.value.permanent  # the outbox tries again later


def test_a_429_asking_for_longer_than_the_bound_ends_the_attempt_without_waiting() -> None:
    waits: list[float] = []
    pacing = Pacing(max_wait_s=30, sleep=waits.append)
    with pytest.raises(RosterUnreadable, match="wait 3600 s"):
        reader(lambda request: httpx.Response(429, headers={"Retry-After": "3600"}), pacing)
    assert waits == []


def test_pages_that_link_in_a_circle_end() -> None:
    with pytest.raises(RosterUnreadable, match="past 3 pages") as endless:
        reader(lambda request: page(ADA, next_url=URL), Pacing(max_pages=3))
    assert endless.value.permanent


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (httpx.Response(302, headers={"Location": "http://127.0.0.1/"}), "HTTP 302"),
        (httpx.Response(200, text="<html>"), "not JSON"),
        (httpx.Response(200, json={"members": [{"name": "no id"}]}), "user_id"),
        (httpx.Response(200, json={"members": [{**ADA, "status": "Gone"}]}), "unknown status"),
        (httpx.Response(200, json={"members": [{**ADA, "roles": "Learner"}]}), "roles"),
    ],
)
def test_a_redirect_or_a_malformed_page_ends_the_read(answer: httpx.Response, reason: str) -> None:
    with pytest.raises(RosterUnreadable, match=reason):
        reader(lambda request: answer)


def test_retry_after_in_seconds_or_as_a_date() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    assert 15 < retry_after_s(later) <= 20
    assert retry_after_s("3") == 3.0
    assert retry_after_s(None) == retry_after_s("soon") == 1.0
