"""API keys: required beyond loopback (or when asked), by Bearer or X-API-Key header."""

from __future__ import annotations

from app_support import SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient

from app.access.api_keys import create_key
from app.core.models import Role


def new_key(client: TestClient, course: str = "default", role: Role = Role.ADMIN) -> str:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, key = create_key(session, "test", course=course, role=role)
    return key


def test_keys_are_required_when_listening_beyond_loopback(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(host="0.0.0.0"))
    response = client.get("/v1/exercises")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.headers["content-type"] == "application/problem+json"
    key = new_key(client)
    assert client.get("/v1/exercises", headers={"Authorization": f"Bearer {key}"}).is_success
    assert client.get("/v1/exercises", headers={"X-API-Key": key}).is_success
    wrong = client.get("/v1/exercises", headers={"X-API-Key": key[:-1]})
    assert wrong.status_code == 401
    posted = client.post(
        "/v1/submissions",
        json={"exercise": SEED, "source": "x = 1"},
        headers={"X-API-Key": key},
    )
    assert posted.status_code == 202
    assert client.get(f"/v1/submissions/{posted.json()['id']}").status_code == 401


def test_health_and_metrics_need_no_key(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(require_api_keys=True))
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200
    assert client.get("/v1/exercises").status_code == 401


def test_on_loopback_the_service_runs_open_but_still_refuses_a_wrong_key(
    client: TestClient,
) -> None:
    assert client.get("/v1/exercises").status_code == 200
    assert client.get("/v1/exercises", headers={"X-API-Key": "agk_nope"}).status_code == 401


def test_idempotency_keys_are_scoped_to_the_api_key(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings(require_api_keys=True))
    first, second = new_key(client), new_key(client)
    body = {"exercise": SEED, "source": "x = 1"}
    ids = {
        client.post(
            "/v1/submissions", json=body, headers={"X-API-Key": key, "Idempotency-Key": "same"}
        ).json()["id"]
        for key in (first, second)
    }
    assert len(ids) == 2
