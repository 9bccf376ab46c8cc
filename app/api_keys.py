"""API keys: made once, shown once, stored as a SHA-256 hash.

A key is 32 random bytes (256 bits, URL-safe base64) behind a recognisable prefix. With that much
entropy a plain SHA-256 is the right hash (a slow password hash protects guessable secrets; these
are not guessable), and it lets a request find its key by an indexed equality lookup.
"""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import ApiKey

PREFIX = "agk_"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(session: Session, name: str) -> tuple[ApiKey, str]:
    """Store a new key; return its row and the key itself (the only time it exists in clear)."""
    key = PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(name=name, key_hash=hash_key(key), prefix=key[: len(PREFIX) + 4])
    session.add(row)
    session.flush()
    return row, key


def find_key(session: Session, key: str) -> ApiKey | None:
    return session.scalars(select(ApiKey).where(ApiKey.key_hash == hash_key(key))).one_or_none()
