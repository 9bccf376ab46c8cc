"""Student links: a student of a course without an LMS submits, reads their own history and code,
and nothing else; a link ends when it expires or is revoked, and a forged one opens nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from app_support import CORRECT, SEED, SettingsFactory
from fastapi.testclient import TestClient

from app.access import student_links
from app.access.api_keys import create_key
from app.core.commands import CommandRefused
from app.core.models import Role
from app.lti.sessions import LaunchSession


def link(client: TestClient, course: str, student: str, lifetime: timedelta | None = None) -> str:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, token = student_links.mint(
            session,
            api.settings,
            course=course,
            student=student,
            lifetime=lifetime or timedelta(days=30),
        )
    return token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def client(two_courses: TestClient) -> TestClient:
    return two_courses


def submit(client: TestClient, token: str, **body: str) -> str:
    response = client.post(
        "/v1/submissions?wait=true",
        json={"exercise": SEED, "source": CORRECT, **body},
        headers=bearer(token),
    )
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def test_a_linked_student_submits_and_reads_only_their_own_work(client: TestClient) -> None:
    ada, grace = link(client, "ml-101", "ada"), link(client, "ml-101", "grace")
    namesake = link(client, "cv-202", "ada")  # another course's ada: another student
    mine = submit(client, ada)
    theirs, elsewhere = submit(client, grace), submit(client, namesake)

    body = client.get(f"/v1/submissions/{mine}", headers=bearer(ada)).json()
    assert (body["student_id"], body["source"], body["report"]["status"]) == (
        "ada",
        CORRECT,
        "passed",
    )
    listing = client.get("/v1/submissions", headers=bearer(ada)).json()
    assert [item["id"] for item in listing["items"]] == [mine]
    asking_for_more = client.get("/v1/submissions?student_id=grace", headers=bearer(ada))
    assert asking_for_more.json()["items"] == []
    for other in (theirs, elsewhere):
        assert client.get(f"/v1/submissions/{other}", headers=bearer(ada)).status_code == 404


def test_a_linked_student_submits_as_themselves_only(client: TestClient) -> None:
    ada = link(client, "ml-101", "ada")
    assert submit(client, ada, student_id="ada")
    response = client.post(
        "/v1/submissions",
        json={"exercise": SEED, "source": CORRECT, "student_id": "grace"},
        headers=bearer(ada),
    )
    assert response.status_code == 403
    assert response.json()["type"].endswith("other-student")


def test_the_course_staff_read_a_linked_students_code(client: TestClient) -> None:
    submission_id = submit(client, link(client, "ml-101", "ada"))
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, key = create_key(session, "ta", course="ml-101", role=Role.INSTRUCTOR)
    body = client.get(f"/v1/submissions/{submission_id}", headers={"X-API-Key": key}).json()
    assert (body["student_id"], body["source"]) == ("ada", CORRECT)


def refusal(client: TestClient, token: str) -> str:
    response = client.get("/v1/submissions", headers=bearer(token))
    assert response.status_code == 401
    return str(response.json()["detail"])


def test_a_link_ends_when_it_expires_or_is_revoked(client: TestClient) -> None:
    expired = link(client, "ml-101", "ada", lifetime=timedelta(seconds=-1))
    assert "expired" in refusal(client, expired)
    ada = link(client, "ml-101", "ada")
    submit(client, ada)
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        assert student_links.revoke(session, course="ml-101", student="ada") == 1
    assert "revoked" in refusal(client, ada)


def test_a_forged_link_opens_nothing(client: TestClient, make_settings: SettingsFactory) -> None:
    ada = link(client, "ml-101", "ada")
    header, claims, signature = ada.removeprefix(student_links.TOKEN_PREFIX).split(".")
    tampered = f"{student_links.TOKEN_PREFIX}{header}.{claims}.{signature[::-1]}"
    assert "not valid" in refusal(client, tampered)
    other_secret = make_settings(secret="another deployment")
    launch = LaunchSession("launch", SEED, "ada", 2).sign(other_secret)
    assert "not valid" in refusal(client, student_links.TOKEN_PREFIX + launch)
    # A token of another purpose, signed with this deployment's secret, is not a link either.
    api = client.app.state.api  # type: ignore[attr-defined]
    session_token = LaunchSession("launch", SEED, "ada", 2).sign(api.settings)
    assert "not valid" in refusal(client, student_links.TOKEN_PREFIX + session_token)


@pytest.mark.parametrize(
    ("course", "student", "why"),
    [
        ("ml-101", "lti:1:ada", "reserved for LMS launches"),
        ("ml-101", " LTI:1:ada", "reserved for LMS launches"),
        ("ml-101", "ada\n", "invisible or control characters"),
        ("ml-101", "ada\u200b", "invisible or control characters"),
        ("no-such-course", "ada", "there is no course"),
    ],
)
def test_a_link_is_minted_only_for_a_student_of_a_course(
    client: TestClient, course: str, student: str, why: str
) -> None:
    with pytest.raises(CommandRefused, match=why):
        link(client, course, student)


@pytest.mark.parametrize(
    ("text", "lifetime"),
    [("90m", timedelta(minutes=90)), ("12h", timedelta(hours=12)), ("2w", timedelta(weeks=2))],
)
def test_a_lifetime_is_read_in_minutes_hours_days_or_weeks(text: str, lifetime: timedelta) -> None:
    assert student_links.parse_lifetime(text) == lifetime


@pytest.mark.parametrize("text", ["30", "0d", "367d", "1y", "-1d"])
def test_a_lifetime_beyond_a_year_or_in_other_units_is_refused(text: str) -> None:
    with pytest.raises(CommandRefused):
        student_links.parse_lifetime(text)


def test_the_pages_say_whether_a_student_must_sign_in(client: TestClient) -> None:
    exercise_page = client.get(f"/exercises/{SEED}").text
    assert '"keysRequired": true' in exercise_page
    assert 'id="sign-in"' in exercise_page
    catalog = client.get("/exercises")
    assert catalog.status_code == 200
    assert f'href="/exercises/{SEED}"' in catalog.text
    assert "Multi-Headed Self-Attention" in catalog.text
