"""API keys: made once, shown once, stored as a SHA-256 hash; each belongs to a course and has
a role (app.core.models.Role), and may be revoked.

A key is 32 random bytes (256 bits, URL-safe base64) behind a recognisable prefix. With that much
entropy a plain SHA-256 is the right hash (a slow password hash protects guessable secrets; these
are not guessable), and it lets a request find its key by an indexed equality lookup.
"""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.commands import CommandRefused
from app.core.models import ApiKey, Course, Role, utcnow
from app.courses.registry import course_named

PREFIX = "agk_"


class KeyCommandError(CommandRefused):
    """A key command that cannot be done as asked; the message says why."""


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(session: Session, name: str, *, course: str, role: Role) -> tuple[ApiKey, str]:
    """Store a new key; return its row and the key itself (the only time it exists in clear)."""
    key = PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(
        name=name,
        key_hash=hash_key(key),
        prefix=key[: len(PREFIX) + 4],
        course_id=course_named(session, course).id,
        role=role,
    )
    session.add(row)
    session.flush()
    return row, key


def find_key(session: Session, key: str) -> ApiKey | None:
    """The key's row, unless it is unknown or revoked."""
    return session.scalars(
        select(ApiKey).where(ApiKey.key_hash == hash_key(key), ApiKey.revoked_at.is_(None))
    ).one_or_none()


def list_keys(session: Session) -> list[tuple[ApiKey, str]]:
    """Every key, with its course's slug, oldest first."""
    rows = session.execute(
        select(ApiKey, Course.slug).join(Course, Course.id == ApiKey.course_id).order_by(ApiKey.id)
    ).all()
    return [(row[0], row[1]) for row in rows]


def revoke_key(session: Session, prefix: str) -> ApiKey:
    """Revoke the one live key whose prefix starts with `prefix`."""
    live = session.scalars(
        select(ApiKey).where(ApiKey.prefix.startswith(prefix), ApiKey.revoked_at.is_(None))
    ).all()
    if len(live) != 1:
        found = "no live key" if not live else f"{len(live)} live keys"
        raise KeyCommandError(f"{found} with prefix {prefix!r}; `autograder keys list` shows them")
    live[0].revoked_at = utcnow()
    return live[0]
