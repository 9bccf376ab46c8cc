"""Alembic's entry point: run the migrations on a connection handed over by `app.core.db.migrate`,
or, from the `alembic` command line, on the database the settings name (AUTOGRADER_DATABASE_URL)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

# Each concept's tables live beside it; importing them registers them all on Base.
import app.access.models
import app.courses.models
import app.grading.models
import app.lti.models
import app.outbox.models
import app.regrades.models  # noqa: F401
from app.core.db import create_db_engine
from app.core.models import Base
from app.core.settings import get_settings

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite alters tables by copying them; batch mode does that for every later migration.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or get_settings().sqlalchemy_url()
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


def run_migrations_offline() -> None:
    url = config.get_main_option("sqlalchemy.url") or get_settings().sqlalchemy_url()
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
