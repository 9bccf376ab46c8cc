"""A full disk refuses the write with a 503 and Retry-After, on SQLite and PostgreSQL, never a
500: the client is told to come back, as for a full queue."""

from __future__ import annotations

import errno
from typing import Any

import pytest
from app_support import CORRECT, SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, text
from sqlalchemy.orm import Session

from app.core.db import Database


def fill_the_disk(database: Database) -> None:
    """From now on the database refuses to grow, with its own disk-full error."""
    engine = database.engine
    if engine.dialect.name == "sqlite":
        with engine.connect() as connection:
            pages = connection.execute(text("PRAGMA page_count")).scalar_one()
        _on_connect(engine, f"PRAGMA max_page_count = {pages}")
        engine.dispose()  # every connection from now on is capped
        return
    with engine.begin() as connection:
        connection.execute(
            text(
                "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$"
            )
        )
        connection.execute(
            text(
                "CREATE TRIGGER disk_full BEFORE INSERT ON submissions "
                "FOR EACH ROW EXECUTE FUNCTION disk_full()"
            )
        )


def _on_connect(engine: Engine, statement: str) -> None:
    def run(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(statement)
        cursor.close()

    event.listen(engine, "connect", run)


def assert_storage_full(client: TestClient) -> None:
    source = CORRECT + "\n# " + "x" * 100_000  # needs new pages
    response = client.post("/v1/submissions", json={"exercise": SEED, "source": source})
    assert response.status_code == 503, response.text
    assert response.json()["type"] == "urn:autograder:problem:storage-full"
    assert int(response.headers["retry-after"]) > 0


def test_a_full_database_answers_503(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> None:
    client = make_client(make_settings(database_url=database_url))
    fill_the_disk(client.app.state.api.database)  # type: ignore[attr-defined]
    assert_storage_full(client)


def test_a_full_disk_answers_503(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(session: Session, objects: object = None) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Session, "flush", no_space)
    assert_storage_full(client)


def test_other_write_failures_stay_500(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(session: Session, objects: object = None) -> None:
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(Session, "flush", denied)
    with pytest.raises(OSError, match="Permission denied"):  # the test client re-raises a 500
        client.post("/v1/submissions", json={"exercise": SEED, "source": CORRECT})
