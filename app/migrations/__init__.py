"""Alembic migrations of the service's database (run by `app.core.db.migrate`).

May import: every package's models (env.py registers their tables on Base)."""
