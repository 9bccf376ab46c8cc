"""Alembic migrations of the service's database (run by `app.core.db.migrate`)."""
