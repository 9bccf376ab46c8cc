"""The database: an engine and its sessions, made on demand (never at import), and migrations.

SQLite (the embedded default) is opened in WAL mode with a busy timeout, so the grading threads
and the request handlers can write at once. The service's own processes open it with
`Timeouts`: no statement of theirs runs, and none waits for a lock, without end (PostgreSQL's
statement and lock timeouts; SQLite's busy timeout), so a locked table costs a request an error
in seconds, not a thread for as long as the lock is held.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, CursorResult, Engine, create_engine, event, make_url, text
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"

# Serialises `upgrade head` between API replicas starting at once on one PostgreSQL database.
_MIGRATION_LOCK_ID = 0x61677231  # "agr1"


_CONNECT_TIMEOUT_S = 5
# Connections kept open for the request threads, the grading threads and the outbox at once. Past
# the pool, a connection is opened for one unit of work and closed after it: under load on SQLite
# (SQLAlchemy keeps 5 by default) that was a new connection and its four pragmas per request.
_POOL: dict[str, Any] = {"pool_size": 10, "max_overflow": 20}


@dataclass(frozen=True)
class Timeouts:
    """How long one statement may run, and how long it may wait for a lock (SQLite: for the
    write lock, its busy timeout), in seconds."""

    statement_s: float
    lock_s: float


# A command (a migration, `demo-course`, `keys create`) waits for the service's writes as long
# as it takes and runs as long as its work does.
UNBOUNDED = Timeouts(statement_s=0, lock_s=30)


def create_db_engine(url: str, timeouts: Timeouts = UNBOUNDED) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            _create_private(Path(database))
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": timeouts.lock_s}, **_POOL
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        **_POOL,
        connect_args={
            # A server that accepts and never answers fails the request in seconds instead of
            # holding it (and a thread of the pool) until the operating system gives up on it.
            "connect_timeout": _CONNECT_TIMEOUT_S,
            "options": f"-c statement_timeout={_ms(timeouts.statement_s)} "
            f"-c lock_timeout={_ms(timeouts.lock_s)}",
        },
    )


def _ms(seconds: float) -> int:
    return math.ceil(seconds * 1000)


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
    cursor.close()


class Database:
    """An engine and a session factory; `session()` is one unit of work, committed on success."""

    def __init__(self, engine: Engine, timeouts: Timeouts = UNBOUNDED) -> None:
        self.engine = engine
        self.timeouts = timeouts  # those `engine` was made with
        self.sessions = sessionmaker(engine, expire_on_commit=False)

    @classmethod
    def from_url(cls, url: str, timeouts: Timeouts = UNBOUNDED) -> Database:
        return cls(create_db_engine(url, timeouts), timeouts)

    @property
    def postgres(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def session(self, limit_s: float | None = None) -> Iterator[Session]:
        """One unit of work; with `limit_s`, each of its statements on PostgreSQL runs, and
        waits for locks, that long at most (SQLite's reads never wait: WAL)."""
        with self.sessions() as session, session.begin():
            if limit_s is not None and self.postgres:
                _limit(session.connection(), limit_s)
            yield session

    def check_writable(self, limit_s: float) -> None:
        """Raise unless a submission could be stored now: the submissions table's write lock
        (PostgreSQL: the lock an INSERT takes on it; SQLite: the database's) is had within
        `limit_s`, and given back at once."""
        with self.engine.connect() as connection:
            if self.postgres:
                _limit(connection, limit_s)
                connection.execute(text("LOCK TABLE submissions IN ROW EXCLUSIVE MODE"))
                connection.rollback()
                return
            connection.exec_driver_sql(f"PRAGMA busy_timeout={_ms(limit_s)}")
            try:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                connection.rollback()
            finally:
                connection.exec_driver_sql(f"PRAGMA busy_timeout={_ms(self.timeouts.lock_s)}")

    def migrate(self) -> None:
        migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()


def changed_rows(result: object) -> int:
    """How many rows an UPDATE or DELETE that `Session.execute` ran changed (its result is a
    cursor's, which the session's signature does not say)."""
    return cast(CursorResult[Any], result).rowcount


def _limit(connection: Connection, limit_s: float) -> None:
    """PostgreSQL: the statement and lock timeouts of the connection's transaction."""
    for name in ("statement_timeout", "lock_timeout"):
        connection.execute(text(f"SET LOCAL {name} = {_ms(limit_s)}"))


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
            # A migration takes what it takes: another replica's included, whose lock it awaits.
            for name in ("statement_timeout", "lock_timeout"):
                connection.execute(text(f"SET {name} = 0"))
            connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": _MIGRATION_LOCK_ID})
            connection.commit()
        try:
            config.attributes["connection"] = connection
            with _sqlite_foreign_keys_off(connection):
                command.upgrade(config, revision)
                connection.commit()
        finally:
            if postgres:
                connection.execute(
                    text("SELECT pg_advisory_unlock(:id)"), {"id": _MIGRATION_LOCK_ID}
                )
                for name in ("statement_timeout", "lock_timeout"):
                    connection.execute(text(f"RESET {name}"))
                connection.commit()


@contextmanager
def _sqlite_foreign_keys_off(connection: Connection) -> Iterator[None]:
    """SQLite alters a table by copying it and dropping the old one, and with foreign keys on,
    that drop deletes (ON DELETE CASCADE) every row that points at the table: a migration runs
    with them off, and the rows must still hold together after it."""
    if connection.dialect.name != "sqlite":
        yield
        return
    connection.exec_driver_sql("PRAGMA foreign_keys=OFF")  # outside a transaction, or ignored
    try:
        yield
        dangling = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        if dangling:
            raise RuntimeError(f"the migration left rows that point at nothing: {dangling[:5]}")
    finally:
        connection.rollback()
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")


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
