"""Who submits, set once: `configure()`'s file, the environment and each call, in that order of
weight, on httpx's MockTransport; and the clear errors of an identity the server would refuse."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import httpx
import pytest
from autograder_client import Client, ConfigurationError, configure
from autograder_client.config import config_path
from client_support import unconfigured
from test_client_http import DONE, SLUG, scripted

LINK = "https://grader.test/course/exercises/multi-headed-self-attention#student_token=ags_x.y.z"


@pytest.fixture(autouse=True)
def _unconfigured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    unconfigured(monkeypatch, tmp_path / "config")


def sent(student_id: str | None = None, call_student: str | None = None) -> httpx.Request:
    """The one request sent for a submission, by a client given `student_id`, with
    `call_student` passed to its submit."""
    seen: list[httpx.Request] = []
    transport = httpx.MockTransport(scripted(iter([httpx.Response(200, json=DONE)]), seen))
    with Client(student_id=student_id, transport=transport) as client:
        client.submit(SLUG, "x = 1\n", student_id=call_student)
    return seen[0]


def student_of(request: httpx.Request) -> str | None:
    student: str | None = json.loads(request.content).get("student_id")
    return student


def test_a_configured_student_id_is_sent_with_every_submission() -> None:
    assert student_of(sent()) is None
    path = configure(student_id="ada")
    assert path == config_path() and json.loads(path.read_text()) == {"student_id": "ada"}
    assert student_of(sent()) == "ada"


def test_an_argument_outweighs_the_environment_which_outweighs_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure(student_id="from-file")
    monkeypatch.setenv("AUTOGRADER_STUDENT_ID", "from-env")
    assert student_of(sent()) == "from-env"
    assert student_of(sent("from-client")) == "from-client"
    assert student_of(sent("from-client", call_student="from-call")) == "from-call"


def test_a_student_link_sets_the_address_and_the_token_readable_by_its_owner_only() -> None:
    config_path().parent.mkdir(parents=True)
    config_path().write_text("{}")
    config_path().chmod(0o644)
    path = configure(link=LINK)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    request = sent()
    assert str(request.url).startswith("https://grader.test/course/v1/submissions")
    assert request.headers["Authorization"] == "Bearer ags_x.y.z"
    assert student_of(request) is None  # the server reads the student from the token


def test_a_link_s_token_goes_to_that_link_s_autograder_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure(link=LINK)
    monkeypatch.setenv("AUTOGRADER_URL", "http://elsewhere.test")
    request = sent()
    assert request.url.host == "elsewhere.test" and "Authorization" not in request.headers


def test_configuring_again_replaces_what_was_configured() -> None:
    configure(student_id="ada", link=LINK)
    configure(student_id="grace")
    request = sent()
    assert (student_of(request), request.url.host) == ("grace", "127.0.0.1")
    assert "Authorization" not in request.headers
    configure()
    assert student_of(sent()) is None


@pytest.mark.parametrize("student", ["lti:1234", "ada\nlovelace", "x" * 201])
def test_a_student_id_the_server_would_refuse_is_refused_before_sending(student: str) -> None:
    with pytest.raises(ConfigurationError, match="student id"):
        configure(student_id=student)
    assert not config_path().exists()
    with pytest.raises(ConfigurationError, match="student id"):
        Client(student_id=student)


def test_an_lti_id_says_whom_it_is_reserved_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOGRADER_STUDENT_ID", "lti:1234")
    with pytest.raises(ConfigurationError, match="reserved for students who come from an LMS"):
        Client()


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("grader.test/exercises#student_token=ags_x", "is an http"),
        ("https://grader.test/exercises", "not a whole student link"),
        ("https://grader.test/exercises#student_token=", "not a whole student link"),
        ("https://grader.test/exercises#student_token=agk_x", "not a whole student link"),
    ],
)
def test_a_malformed_link_says_what_a_link_looks_like(link: str, why: str) -> None:
    with pytest.raises(ConfigurationError, match=why):
        configure(link=link)


def test_a_damaged_config_file_says_how_to_mend_it() -> None:
    config_path().parent.mkdir(parents=True)
    config_path().write_text("{not json")
    with pytest.raises(ConfigurationError, match=r"run autograder_client\.configure\(\) again"):
        Client()
