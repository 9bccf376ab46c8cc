"""The database: an engine and its sessions, made on demand (never at import), and migrations.

SQLite (the embedded default) is opened in WAL mode with a busy timeout, so the grading threads
and the request handlers can write at once; PostgreSQL needs nothing special.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"

# Serialises `upgrade head` between API replicas starting at once on one PostgreSQL database.
_MIGRATION_LOCK_ID = 0x61677231  # "agr1"


_CONNECT_TIMEOUT_S = 5
# Connections kept open for the request threads, the grading threads and the outbox at once. Past
# the pool, a connection is opened for one unit of work and closed after it: under load on SQLite
# (SQLAlchemy keeps 5 by default) that was a new connection and its four pragmas per request.
_POOL: dict[str, Any] = {"pool_size": 10, "max_overflow": 20}


def create_db_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            _create_private(Path(database))
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 30}, **_POOL
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        **_POOL,
        # A server that accepts and never answers fails the request in seconds instead of holding
        # it (and a thread of the pool) until the operating system gives up on the socket.
        connect_args={"connect_timeout": _CONNECT_TIMEOUT_S},
    )


def _create_private(path: Path) -> None:
    """The SQLite file, readable by this user only (its -wal and -shm files take its mode), in
    a folder of this user's only, where the service creates them: they hold every submission,
    the API keys' hashes and the LTI tool key."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):  # an empty file is an empty SQLite database
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL: readers don't block the writer, so polling clients don't stall the graders.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Database:
    """An engine and a session factory; `session()` is one unit of work, committed on success."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    @classmethod
    def from_url(cls, url: str) -> Database:
        return cls(create_db_engine(url))

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
            yield session

    def ping(self) -> None:
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def migrate(self) -> None:
        migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (`alembic upgrade head`); a no-op when it is there."""
    config = alembic_config()
    with engine.connect() as connection:
        postgres = connection.dialect.name == "postgresql"
        if postgres:
            connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": _MIGRATION_LOCK_ID})
            connection.commit()
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
            connection.commit()
        finally:
            if postgres:
                connection.execute(
                    text("SELECT pg_advisory_unlock(:id)"), {"id": _MIGRATION_LOCK_ID}
                )
                connection.commit()


@contextmanager
def command_session(url: str) -> Iterator[Session]:
    """One unit of work for a command: the database brought to the latest schema, committed on
    success, closed after it."""
    database = Database.from_url(url)
    try:
        database.migrate()
        with database.session() as session:
            yield session
    finally:
        database.close()
