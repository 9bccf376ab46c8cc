"""An LMS for the tests: `lti1p3platform` (written by others) plays the platform, served by
uvicorn on a free loopback port, so the tool fetches its keys, asks its token endpoint and posts
scores over real HTTP. The browser between them is a TestClient (the tool, on https so its
Secure cookies come along) and an httpx client (the platform).

Routes: /jwks, /auth (the OIDC auth endpoint: answers with the auto-posting launch form),
/token (client credentials, the tool's signed assertion checked against the tool's JWKS),
/lineitems/{id} (the line item, once a test gives one), /lineitems/{id}/scores (the gradebook),
/deep-link-return (the deep-linking answer, checked), /memberships (the course's roster, Names
and Role Provisioning: paged, rate limited on demand).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import unescape
from typing import Any
from urllib.parse import urlparse

import httpx
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.testclient import TestClient
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration

from app.core.db import Database
from app.lti.contexts import bind
from app.lti.models import ContextPolicy
from app.lti.registrations import add_platform

ISSUER = "https://lms.test"
CLIENT_ID = "autograder-client"
DEPLOYMENT_ID = "deployment-1"
# The LMS course the platform launches from unless a test says otherwise: `register` binds it.
CONTEXT_ID = "course-1"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
MEMBERSHIPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
LINEITEM_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
]


def _rsa_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@dataclass
class NextLaunch:
    """What the platform's next launch carries."""

    kind: str = "resource"  # or "deep-link"
    user_id: str = "student-42"
    exercise: str = ""
    # The LMS course it comes from (the context claim).
    context_id: str = CONTEXT_ID
    context_title: str = "Deep learning"
    context_label: str = "DL101"
    # A faulty or hostile platform: the id_token without `exp`, claims replaced (None: left
    # out), and where a deep-linking answer goes (None: the platform's own return endpoint).
    expires: bool = True
    claims: dict[str, Any] = field(default_factory=dict)
    deep_link_return_url: str | None = None
    # Whether it names the roster's URL (the NRPS claim), as an LMS with NRPS enabled does.
    offers_roster: bool = False


@dataclass
class Platform:
    url: str
    registration: Registration
    next_launch: NextLaunch = field(default_factory=NextLaunch)
    scores: list[dict[str, Any]] = field(default_factory=list)
    content_items: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    # Statuses the score endpoint answers with before it accepts (to prove retries).
    score_failures: list[int] = field(default_factory=list)
    # The roster (NRPS members), the members per page, the answers of the roster endpoint before
    # it serves a page (429s, with `Retry-After: 1`), and each page asked (its query).
    roster: list[dict[str, Any]] = field(default_factory=list)
    roster_page_size: int = 2
    roster_failures: list[int] = field(default_factory=list)
    roster_requests: list[str] = field(default_factory=list)
    # What GET of the line item answers (its endDateTime, ...); None: 404, it cannot be read.
    lineitem: dict[str, Any] | None = None

    def memberships_url(self) -> str:
        return f"{self.url}/memberships"

    def conf(self) -> LTI1P3PlatformConfAbstract:
        return _Conf(registration=self.registration)

    def lineitem_url(self) -> str:
        return f"{self.url}/lineitems/1"

    def login_url(self, tool_login_url: str, message_hint: str) -> str:
        """The third-party-initiated login that starts a launch (what the LMS page links)."""
        login = _Login(None, self.conf())
        login.set_lti_message_hint(hint=message_hint)
        login.set_launch_url(self.registration.get_launch_url() or "")
        self.registration.set_oidc_login_url(tool_login_url)
        url: str = login.prepare_preflight_url(self.next_launch.user_id)
        return url


class _Conf(LTI1P3PlatformConfAbstract):  # type: ignore[misc]
    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        registration: Registration = self._registration
        return registration


class _Login(OIDCLoginAbstract):  # type: ignore[misc]
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class _Launch(LTIAdvantageMessageLaunchAbstract):  # type: ignore[misc]
    def __init__(self, query: dict[str, Any], platform: Platform) -> None:
        self._query = query
        self._platform = platform
        super().__init__(None, platform.conf())

    def get_preflight_response(self) -> dict[str, Any]:
        return self._query

    def get_launch_message(self, include_extra_claims: bool = True) -> dict[str, Any]:
        message: dict[str, Any] = super().get_launch_message(include_extra_claims)
        for name, value in self._platform.next_launch.claims.items():
            if value is None:
                message.pop(name, None)
            else:
                message[name] = value
        return message

    def prepare_launch(self, preflight_response: dict[str, Any]) -> None:
        launch = self._platform.next_launch
        if not launch.expires:
            self.set_id_token_expiration(0)  # 0: the platform signs no `iat` and `exp`
        self.set_user_data(
            launch.user_id,
            ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"]
            if launch.kind == "resource"
            else ["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"],
            full_name="Ada Student",
        )
        self.set_launch_context_claim(
            launch.context_id,
            context_title=launch.context_title,
            context_label=launch.context_label,
        )
        if launch.offers_roster:
            self.set_nrps(self._platform.memberships_url())
        if launch.kind == "deep-link":
            return_url = launch.deep_link_return_url or f"{self._platform.url}/deep-link-return"
            self.set_dl(return_url, accept_types={"ltiResourceLink"})
            return
        self.set_resource_link_claim("link-1", title="Exercise")
        self.set_custom_parameters_claim({"exercise": launch.exercise})
        self.set_ags(f"{self._platform.url}/lineitems", self._platform.lineitem_url())

    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return launch_data


def _platform_app(platform: Platform) -> FastAPI:
    app = FastAPI()

    @app.get("/jwks")
    def jwks() -> dict[str, Any]:
        conf = platform.conf()
        conf.get_registration()
        return dict(conf.get_jwks())

    @app.get("/auth")
    def auth(request: Request) -> HTMLResponse:
        data = _Launch(dict(request.query_params), platform).lti_launch()
        return HTMLResponse(
            f"<form method='post' action='{data['launch_url']}'>"
            f"<input name='id_token' value='{data['id_token']}'>"
            f"<input name='state' value='{data['state']}'></form>"
        )

    @app.post("/token")
    async def token(request: Request) -> JSONResponse:
        form = {key: str(value) for key, value in (await request.form()).items()}
        conf = platform.conf()
        conf.get_registration()
        try:
            return JSONResponse(dict(conf.get_access_token(form)))
        except Exception as error:
            platform.refusals.append(f"token: {error}")
            return JSONResponse({"error": "invalid_client"}, status_code=400)

    @app.get("/lineitems/{item}")
    def lineitem(item: str, request: Request) -> Response:
        conf = platform.conf()
        conf.get_registration()
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not conf.validate_token(bearer, allowed_scopes=LINEITEM_SCOPES):
            platform.refusals.append("lineitem: token without a line item scope")
            return Response(status_code=403)
        if platform.lineitem is None:
            return Response(status_code=404)
        return JSONResponse(
            {"id": f"{platform.url}/lineitems/{item}", **platform.lineitem},
            media_type="application/vnd.ims.lis.v2.lineitem+json",
        )

    @app.post("/lineitems/{item}/scores")
    async def scores(item: str, request: Request) -> Response:
        conf = platform.conf()
        conf.get_registration()
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not conf.validate_token(bearer, allowed_scopes=[SCORE_SCOPE]):
            platform.refusals.append("scores: token without the score scope")
            return Response(status_code=403)
        if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
            return Response(status_code=415)
        if platform.score_failures:
            return Response(status_code=platform.score_failures.pop(0))
        platform.scores.append({"lineitem": item, **(await request.json())})
        return Response(status_code=200)

    @app.get("/memberships")
    def memberships(request: Request, offset: int = 0) -> Response:
        conf = platform.conf()
        conf.get_registration()
        platform.roster_requests.append(request.url.query)
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if not conf.validate_token(bearer, allowed_scopes=[MEMBERSHIPS_SCOPE]):
            platform.refusals.append("memberships: token without the roster scope")
            return Response(status_code=403)
        if platform.roster_failures:
            return Response(
                status_code=platform.roster_failures.pop(0), headers={"Retry-After": "1"}
            )
        end = offset + platform.roster_page_size
        page = {
            "id": str(request.url),
            "context": {"id": CONTEXT_ID},
            "members": platform.roster[offset:end],
        }
        headers = {}
        if end < len(platform.roster):
            headers["Link"] = f'<{platform.memberships_url()}?offset={end}>; rel="next"'
        return JSONResponse(
            page,
            headers=headers,
            media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
        )

    @app.post("/deep-link-return")
    async def deep_link_return(request: Request) -> HTMLResponse:
        form = await request.form()
        conf = platform.conf()
        conf.get_registration()
        platform.content_items.extend(conf.validate_deeplinking_resp({"JWT": form["JWT"]}))
        return HTMLResponse("<p>Added to your course.</p>")

    return app


@contextmanager
def serve_platform(tool_jwks: dict[str, Any]) -> Iterator[Platform]:
    """The platform on a free loopback port, knowing the tool's keys."""
    private, public = _rsa_pair()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    registration = (
        Registration()
        .set_iss(ISSUER)
        .set_client_id(CLIENT_ID)
        .set_deployment_id(DEPLOYMENT_ID)
        .set_launch_url("https://testserver/lti/launch")
        .set_deeplink_launch_url("https://testserver/lti/launch")
        .set_platform_public_key(public)
        .set_platform_private_key(private)
        .set_tool_key_set(tool_jwks)
    )
    platform = Platform(url=url, registration=registration)
    server = uvicorn.Server(
        uvicorn.Config(_platform_app(platform), log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            thread.join(0.01)
        yield platform
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def register(tool: TestClient, platform: Platform) -> None:
    """What `autograder lti add-platform` stores, straight into the tool's database."""
    register_in(tool.app.state.api.database, platform)  # type: ignore[attr-defined]


def register_in(
    database: Database,
    platform: Platform,
    course: str = "default",
    contexts: ContextPolicy = ContextPolicy.BOUND,
) -> int:
    """`register`, into a database the tool runs on elsewhere, with the LMS course CONTEXT_ID
    bound to `course` (`autograder lti contexts bind`); returns the platform's id."""
    with database.session() as session:
        row = add_platform(
            session,
            ISSUER,
            CLIENT_ID,
            [DEPLOYMENT_ID],
            f"{platform.url}/auth",
            f"{platform.url}/token",
            f"{platform.url}/jwks",
            course=course,
            context_policy=contexts,
        )
        session.flush()
        bind(session, row.id, CONTEXT_ID, course=course)
        return row.id


@dataclass
class LaunchForm:
    action: str
    id_token: str
    state: str


def start_launch(tool: TestClient, platform: Platform, message_hint: str = "hint") -> LaunchForm:
    """The browser's way to the launch: the tool's login, then the platform's auth endpoint.
    Returns the form the browser would post to the tool (not posted yet)."""
    login = urlparse(platform.login_url("https://testserver/lti/login", message_hint))
    answer = tool.get(f"{login.path}?{login.query}", follow_redirects=False)
    assert answer.status_code == 302, answer.text
    page = httpx.get(answer.headers["location"], timeout=10)
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r"name='(\w+)' value='([^']*)'", page.text))
    action = re.search(r"action='([^']*)'", page.text)
    assert action is not None
    return LaunchForm(unescape(action.group(1)), fields["id_token"], fields["state"])


def post_launch(tool: TestClient, form: LaunchForm) -> Any:
    path = urlparse(form.action).path
    return tool.post(
        path, data={"id_token": form.id_token, "state": form.state}, follow_redirects=False
    )


def post_launch_over_http(tool: httpx.Client, platform: Platform) -> httpx.Response:
    """The platform's next launch of a tool served over HTTP: the login, the platform's auth
    endpoint, and the tool's answer to the launch's post."""
    base = str(tool.base_url).rstrip("/")
    login = urlparse(platform.login_url(f"{base}/lti/login", "hint"))
    answer = tool.get(f"{login.path}?{login.query}", follow_redirects=False)
    assert answer.status_code == 302, answer.text
    form = httpx.get(answer.headers["location"], timeout=10).text
    fields = dict(re.findall(r"name='(\w+)' value='([^']*)'", form))
    # The state cookie is Secure and this tool is on plain http: carried by hand.
    cookie = "; ".join(f"{name}={value}" for name, value in answer.cookies.items())
    return tool.post(
        "/lti/launch",
        data={"id_token": fields["id_token"], "state": fields["state"]},
        headers={"Cookie": cookie},
        follow_redirects=False,
    )


def launch_over_http(tool: httpx.Client, platform: Platform) -> str:
    """`post_launch_over_http`, up to the tool's redirect; returns where it sends the browser."""
    launched = post_launch_over_http(tool, platform)
    assert launched.status_code == 303, launched.text
    location: str = launched.headers["location"]
    return location
