"""Fixtures of the service's tests: settings in a temporary data dir, the app over a fake
sandbox (one warm Grader for the session), and databases on SQLite and on PostgreSQL.

PostgreSQL: each test that asks for it gets a database of its own on the local server
(127.0.0.1:5432, trust auth), dropped afterwards. Those tests are skipped, saying why, only when
no server answers there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from app_support import ClientFactory, FakeSandbox, SettingsFactory
from browser_support import chromium
from fastapi.testclient import TestClient
from playwright.sync_api import Browser
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine
from test_server import free_port, server

from app.access.api_keys import create_key
from app.core.db import Database
from app.core.models import Role
from app.core.settings import AppSettings
from app.main import create_app
from grader.catalog import Catalog
from grader.runner import Grader
from grader.settings import GraderSettings

PG_SERVER = "127.0.0.1:5432"
PG_USERS = ("postgres", "root")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog.from_folder(GraderSettings().exercises_dir)


@pytest.fixture(scope="session")
def _session_sandbox() -> FakeSandbox:
    return FakeSandbox()


@pytest.fixture(scope="session")
def _session_grader(catalog: Catalog, _session_sandbox: FakeSandbox) -> Grader:
    grader = Grader(catalog, _session_sandbox, "test-secret")
    grader.warm()
    return grader


@pytest.fixture
def sandbox(_session_sandbox: FakeSandbox) -> Iterator[FakeSandbox]:
    _session_sandbox.reset()
    yield _session_sandbox
    _session_sandbox.gate.set()  # release anything a test left waiting


@pytest.fixture
def grader(_session_grader: Grader, sandbox: FakeSandbox) -> Grader:
    return _session_grader


def _admin_engine() -> Engine | None:
    for user in PG_USERS:
        engine = create_engine(
            f"postgresql+psycopg://{user}@{PG_SERVER}/test",
            isolation_level="AUTOCOMMIT",
            connect_args={"connect_timeout": 3},
        )
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception:
            engine.dispose()
            continue
        return engine
    return None


@pytest.fixture(scope="session")
def _pg_admin() -> Iterator[Engine | None]:
    engine = _admin_engine()
    yield engine
    if engine is not None:
        engine.dispose()


@contextmanager
def _fresh_pg_database(admin: Engine | None) -> Iterator[str]:
    if admin is None:
        pytest.skip(f"no PostgreSQL server answers at {PG_SERVER} (users {PG_USERS})")
    name = f"autograder_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def postgres_url(_pg_admin: Engine | None) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test."""
    with _fresh_pg_database(_pg_admin) as url:
        yield url


@pytest.fixture(scope="module")
def module_postgres_url(_pg_admin: Engine | None) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test module."""
    with _fresh_pg_database(_pg_admin) as url:
        yield url


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """A migrated database, on SQLite and on PostgreSQL (`database_url`)."""
    database = Database.from_url(database_url)
    database.migrate()
    yield database
    database.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test that takes this runs once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def make_settings(tmp_path: Path) -> SettingsFactory:
    def make(**overrides: Any) -> AppSettings:
        values: dict[str, Any] = {
            "data_dir": tmp_path / "var",
            "secret": "test-secret",
            "log_format": "text",
            "shutdown_grace_s": 5.0,
            "outbox_poll_s": 0.05,
            "allowed_hosts": "testserver",  # the test client's Host
            **overrides,
        }
        return AppSettings(**values)

    return make


@pytest.fixture
def settings(make_settings: SettingsFactory) -> AppSettings:
    return make_settings()


@pytest.fixture
def make_client(grader: Grader) -> Iterator[ClientFactory]:
    """Start an app with these settings; every client started is stopped after the test."""
    clients: list[TestClient] = []

    def start(settings: AppSettings) -> TestClient:
        client = TestClient(create_app(settings, grader=grader))
        client.__enter__()
        clients.append(client)
        return client

    yield start
    for client in reversed(clients):
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: ClientFactory, settings: AppSettings) -> TestClient:
    return make_client(settings)


@pytest.fixture
def two_courses(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> TestClient:
    """An app that requires keys, with courses ml-101 and cv-202 (an instructor key made each)."""
    client = make_client(make_settings(require_api_keys=True, database_url=database_url))
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        create_key(session, "staff", course="ml-101", role=Role.INSTRUCTOR)
        create_key(session, "staff", course="cv-202", role=Role.INSTRUCTOR)
    return client


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`autograder serve` on its defaults for one (browser) test module: where it answers."""
    port = free_port()
    with server(tmp_path_factory.mktemp("serve"), port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium per browser test module (tests/app/browser_support.py)."""
    with chromium() as browser:
        yield browser
