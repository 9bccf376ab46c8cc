"""The service's database timeouts (app.core.db.Timeouts): a statement waits for a lock that long at
most, on SQLite and on PostgreSQL, and the write probe of /readyz sees a table locked for
writes where a plain query would not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import OperationalError

from app.api.problem_responses import database_timed_out
from app.core.db import Database, Timeouts
from app.core.models import Submission

SHORT = Timeouts(statement_s=30, lock_s=0.3)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    database = Database.from_url(database_url, SHORT)
    database.migrate()
    yield database
    database.close()


@pytest.fixture
def writes_locked(database_url: str, database: Database) -> Iterator[Connection]:
    """Another session holds what keeps writes out: SQLite's write lock; on PostgreSQL a SHARE
    lock on the submissions table, which lets readers in (a plain SELECT still answers)."""
    holder = create_engine(database_url)
    with holder.connect() as connection:
        if database.postgres:
            connection.execute(text("LOCK TABLE submissions IN SHARE MODE"))
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        yield connection
        connection.rollback()
    holder.dispose()


def test_the_write_probe_fails_within_its_limit_while_writes_are_locked(
    database: Database, writes_locked: Connection
) -> None:
    with database.session() as session:
        session.execute(text("SELECT count(*) FROM submissions"))  # readers still get in
    with pytest.raises(OperationalError) as raised:
        database.check_writable(0.2)
    assert database_timed_out(raised.value)
    writes_locked.rollback()
    database.check_writable(0.2)


def test_a_write_waits_for_a_lock_no_longer_than_the_lock_timeout(
    database: Database, writes_locked: Connection
) -> None:
    with pytest.raises(OperationalError) as raised, database.session() as session:
        session.add(Submission(exercise="e", source="", course_id=1))
        session.flush()
    assert database_timed_out(raised.value)


def test_postgres_connections_carry_the_timeouts_also_after_a_migration(
    postgres_url: str,
) -> None:
    database = Database.from_url(postgres_url, Timeouts(statement_s=30, lock_s=2.5))
    try:
        database.migrate()  # runs unbounded, then gives its connection back as it found it
        for _ in range(3):  # the pool's connections, the migration's among them
            with database.session() as session:
                assert session.scalar(text("SHOW statement_timeout")) == "30s"
                assert session.scalar(text("SHOW lock_timeout")) == "2500ms"
    finally:
        database.close()
