"""The schema: migrations on an empty database, on SQLite and on PostgreSQL."""

from __future__ import annotations

import socket
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, Table, func, inspect, select, update
from sqlalchemy.exc import OperationalError

from app.access.api_keys import create_key, find_key
from app.core.db import Database, alembic_config, changed_rows, migrate
from app.core.models import DEFAULT_COURSE_ID, Base, Role, Submission, SubmissionStatus
from app.courses.registry import course_named
from app.grading.models import OutcomeKind, ReportOutcome


def test_upgrade_head_on_an_empty_database_makes_every_table(database_url: str) -> None:
    database = Database.from_url(database_url)
    try:
        assert inspect(database.engine).get_table_names() == []
        migrate(database.engine)
        tables = set(inspect(database.engine).get_table_names())
        assert {"alembic_version", "submissions", "api_keys", "webhook_deliveries"} <= tables
        migrate(database.engine)  # again: nothing to do, no error
    finally:
        database.close()


def test_the_sqlite_file_and_its_folder_are_the_owner_s_only(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    database = Database.from_url(f"sqlite:///{data_dir / 'autograder.db'}")
    try:
        database.migrate()
        with database.engine.connect():  # the WAL files exist while a connection is open
            modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in data_dir.iterdir()}
    finally:
        database.close()
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert modes == {"autograder.db": 0o600, "autograder.db-wal": 0o600, "autograder.db-shm": 0o600}


def test_the_migrations_match_the_models(database_url: str) -> None:
    database = Database.from_url(database_url)
    try:
        database.migrate()
        with database.engine.connect() as connection:
            diff = compare_metadata(
                MigrationContext.configure(connection, opts={"compare_type": True}), Base.metadata
            )
        assert diff == []
    finally:
        database.close()


def test_a_submission_round_trips_with_aware_timestamps_and_json(database_url: str) -> None:
    database = Database.from_url(database_url)
    try:
        database.migrate()
        with database.session() as session:
            row = Submission(exercise="e", source="s = 'é'", report={"a": [1, 2.5, None]})
            session.add(row)
            session.flush()
            submission_id = row.id
        with database.session() as session:
            stored = session.get(Submission, submission_id)
            assert stored is not None
            assert stored.status is SubmissionStatus.QUEUED
            assert stored.report == {"a": [1, 2.5, None]}
            assert stored.source == "s = 'é'"
            assert stored.created_at.tzinfo is not None
            assert abs((datetime.now(UTC) - stored.created_at).total_seconds()) < 60
    finally:
        database.close()


def test_a_statement_says_how_many_rows_it_changed(database: Database) -> None:
    with database.session() as session:
        session.add_all(Submission(exercise=name, source="") for name in ("a", "a", "b"))
    with database.session() as session:
        rename = update(Submission).where(Submission.exercise == "a").values(exercise="c")
        assert changed_rows(session.execute(rename)) == 2
        assert changed_rows(session.execute(rename)) == 0


def test_api_keys_are_stored_hashed_and_found_by_key(database_url: str) -> None:
    database = Database.from_url(database_url)
    try:
        database.migrate()
        with database.session() as session:
            row, key = create_key(session, "lms", course="default", role=Role.SUBMITTER)
        assert key.startswith("agk_") and len(key) > 40
        assert key not in row.key_hash
        with database.session() as session:
            found = find_key(session, key)
            assert found is not None and found.name == "lms"
            assert find_key(session, key + "x") is None
    finally:
        database.close()


def test_a_course_made_after_the_migrations_gets_an_id_of_its_own(database_url: str) -> None:
    database = Database.from_url(database_url)  # the migrations inserted the default course
    try:
        database.migrate()
        with database.session() as session:
            assert course_named(session, "ml-101").id != DEFAULT_COURSE_ID
    finally:
        database.close()


def test_a_database_server_that_never_answers_fails_a_connection_instead_of_holding_it() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        database = Database.from_url(f"postgresql+psycopg://nobody@127.0.0.1:{port}/test")
        outcome: list[BaseException] = []

        def connect() -> None:
            try:
                database.check_writable(1.0)
            except BaseException as error:
                outcome.append(error)

        attempt = threading.Thread(target=connect, daemon=True)
        attempt.start()
        attempt.join(timeout=60)  # without a connect timeout, the kernel's: minutes
        database.close()
    assert not attempt.is_alive(), "the connection attempt hangs"
    assert isinstance(outcome[0], OperationalError)


def test_submissions_graded_before_exercise_versions_keep_no_version(database_url: str) -> None:
    before = ScriptDirectory.from_config(alembic_config()).get_revision("0006").down_revision
    assert isinstance(before, str)
    database = Database.from_url(database_url)
    try:
        migrate(database.engine, before)
        submissions = Table("submissions", MetaData(), autoload_with=database.engine)
        with database.engine.begin() as connection:
            connection.execute(
                submissions.insert().values(
                    id="01JD8Z6Q3M9V7N4K2P5R8T1W0X", course_id=1, exercise="e", source="s",
                    status="done", attempts=1, created_at=datetime.now(UTC),
                )
            )  # fmt: skip
        migrate(database.engine)
        with database.session() as session:
            old = session.get(Submission, "01JD8Z6Q3M9V7N4K2P5R8T1W0X")
            assert old is not None and old.exercise_version is None
            session.add(Submission(exercise="e", source="s", exercise_version="f31f15238d73"))
    finally:
        database.close()


def test_reports_stored_before_course_figures_get_their_columns_and_rows(
    database_url: str,
) -> None:
    report = {
        "exercise": "e", "status": "failed", "score": 1.0, "max_score": 2.0,
        "tests": [
            {"name": "t1", "visibility": "visible", "status": "passed"},
            {"name": "t2", "visibility": "hidden", "status": "failed"},
        ],
        "diagnosis": [{"code": "no-scaling", "message": "m", "tests": ["t2"]}],
        "properties": [{"name": "causal", "status": "failed", "message": "m"}],
    }  # fmt: skip
    database = Database.from_url(database_url)
    try:
        migrate(database.engine, "0006")
        submissions = Table("submissions", MetaData(), autoload_with=database.engine)
        with database.engine.begin() as connection:
            connection.execute(
                submissions.insert(),
                [
                    {"id": f"01JD8Z6Q3M9V7N4K2P5R8T1W0{last}", "course_id": 1, "exercise": "e",
                     "source": "s", "status": status, "attempts": 1, "report": stored,
                     "created_at": datetime.now(UTC)}
                    for last, status, stored in (("X", "done", report), ("Y", "queued", None))
                ],
            )  # fmt: skip
        migrate(database.engine)
        with database.session() as session:
            done = session.get(Submission, "01JD8Z6Q3M9V7N4K2P5R8T1W0X")
            queued = session.get(Submission, "01JD8Z6Q3M9V7N4K2P5R8T1W0Y")
            assert done is not None and queued is not None
            assert (done.report_status, done.score, done.max_score, done.charged) == (
                "failed", 1.0, 2.0, True,
            )  # fmt: skip
            assert (queued.report_status, queued.score, queued.charged) == (None, None, True)
            rows = session.execute(
                select(
                    ReportOutcome.submission_id,
                    ReportOutcome.kind,
                    ReportOutcome.name,
                    ReportOutcome.status,
                    ReportOutcome.visibility,
                ).order_by(ReportOutcome.id)
            ).all()
        assert [tuple(row) for row in rows] == [
            (done.id, OutcomeKind.TEST, "t1", "passed", "visible"),
            (done.id, OutcomeKind.TEST, "t2", "failed", "hidden"),
            (done.id, OutcomeKind.FINDING, "no-scaling", "", None),
            (done.id, OutcomeKind.PROPERTY, "causal", "failed", None),
        ]
    finally:
        database.close()


def test_rows_that_point_at_a_table_a_migration_rebuilds_survive_it(database_url: str) -> None:
    """SQLite rebuilds a table to alter it; with foreign keys on, dropping the old copy used to
    delete (ON DELETE CASCADE) every launch, score post and webhook delivery pointing at it."""
    submission, launch, now = (
        "01JD8Z6Q3M9V7N4K2P5R8T1W0X",
        "01JD8Z6Q3M9V7N4K2P5R8T1W0Y",
        datetime.now(UTC),
    )
    database = Database.from_url(database_url)
    try:
        migrate(database.engine, "0003")
        tables = MetaData()
        platforms, launches, submissions, posts, deliveries = (
            Table(name, tables, autoload_with=database.engine)
            for name in (
                "lti_platforms", "lti_launches", "submissions", "lti_score_posts",
                "webhook_deliveries",
            )
        )  # fmt: skip
        with database.engine.begin() as connection:
            connection.execute(
                platforms.insert().values(
                    id=1, issuer="https://lms.test", client_id="c1", deployment_ids=["1"],
                    auth_login_url="https://lms.test/auth", auth_token_url="https://lms.test/token",
                    key_set_url="https://lms.test/jwks", created_at=now,
                )
            )  # fmt: skip
            connection.execute(
                launches.insert().values(
                    id=launch, platform_id=1, deployment_id="1", user_id="sub-1", exercise="e",
                    ags_scopes=[], created_at=now,
                )
            )  # fmt: skip
            connection.execute(
                submissions.insert().values(
                    id=submission, exercise="e", source="s", status="done", attempts=1,
                    created_at=now,
                )
            )  # fmt: skip
            connection.execute(
                posts.insert().values(
                    submission_id=submission, launch_id=launch, status="delivered", attempts=1,
                    next_attempt_at=now, created_at=now, updated_at=now,
                )
            )  # fmt: skip
            connection.execute(
                deliveries.insert().values(
                    submission_id=submission, url="https://hooks.test/", status="delivered",
                    attempts=1, created_at=now, updated_at=now, next_attempt_at=now,
                )
            )  # fmt: skip
        migrate(database.engine)
        with database.engine.connect() as connection:
            counts = [
                connection.execute(select(func.count()).select_from(table)).scalar_one()
                for table in (platforms, launches, submissions, posts, deliveries)
            ]
        assert counts == [1, 1, 1, 1, 1]
    finally:
        database.close()
