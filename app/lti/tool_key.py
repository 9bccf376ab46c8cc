"""The tool's RSA key pair: made on first need and kept in the database (never in the
repository), so every API replica and worker signs with the same key and the JWKS is stable.

The private key is stored encrypted (Fernet: AES-CBC with an HMAC) under a key derived from the
master secret, so a copy of the database (a backup, a dump, a stolen file) does not sign as the
tool. A key stored in clear by an earlier version is encrypted the first time it is read: only
a process holding the secret can do that, which rules out a migration run on its own.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pylti1p3.registration import Registration
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.api.problems import Problem
from app.core.db import Database
from app.core.settings import AppSettings
from app.lti.models import LtiToolKey

log = logging.getLogger(__name__)

_KEY_ID = 1
_CLEAR_PEM = "-----BEGIN"


class ToolKeyUnreadable(Problem):
    """The stored key was encrypted under another master secret: LTI is out of service until the
    operator restores the secret (a 503 in words, and an error in the log, not a 500)."""

    status, kind, title = 503, "lti-tool-key-unreadable", "LTI tool key unreadable"


class ToolKey:
    """The private key in PEM and what is derived from it."""

    def __init__(self, private_pem: str) -> None:
        self.private_pem = private_pem
        key = serialization.load_pem_private_key(private_pem.encode(), password=None)
        self.public_pem = (
            key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )

    def jwks(self) -> dict[str, list[dict[str, Any]]]:
        # pylti1p3's own JWK (the kid is the key's thumbprint), so the kid it puts in the
        # headers of what the tool signs is the one published here.
        return {"keys": [dict(Registration.get_jwk(self.public_pem))]}


def _generate() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _cipher(settings: AppSettings) -> Fernet:
    derived = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"autograder:lti:tool-key"
    ).derive(settings.master_secret().encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def _read(row: LtiToolKey, cipher: Fernet) -> ToolKey:
    """The key of `row`, encrypting it in place when an earlier version stored it in clear."""
    if row.private_pem.startswith(_CLEAR_PEM):
        key = ToolKey(row.private_pem)
        row.private_pem = cipher.encrypt(key.private_pem.encode()).decode()
        return key
    try:
        return ToolKey(cipher.decrypt(row.private_pem.encode()).decode())
    except InvalidToken:
        unreadable = ToolKeyUnreadable(
            "the LTI tool key in the database was encrypted under another AUTOGRADER_SECRET"
        )
        log.error("%s: restore the secret it was made under", unreadable)
        raise unreadable from None


def _stored(session: Session) -> LtiToolKey | None:
    return session.get(LtiToolKey, _KEY_ID)


def tool_key(database: Database, settings: AppSettings) -> ToolKey:
    """The tool's key, made and stored the first time it is asked for."""
    cipher = _cipher(settings)
    with database.session() as session:
        row = _stored(session)
        if row is not None:
            return _read(row, cipher)
    try:
        with database.session() as session:
            sealed = cipher.encrypt(_generate().encode()).decode()
            session.add(LtiToolKey(id=_KEY_ID, private_pem=sealed))
    except IntegrityError:  # another process stored one first: use that one
        pass
    with database.session() as session:
        row = _stored(session)
        assert row is not None
        return _read(row, cipher)
