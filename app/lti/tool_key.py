"""The tool's RSA key pair: made on first need and kept in the database (never in the
repository), so every API replica and worker signs with the same key and the JWKS is stable."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pylti1p3.registration import Registration
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db import Database
from app.lti.models import LtiToolKey

_KEY_ID = 1


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


def _stored(session: Session) -> LtiToolKey | None:
    return session.get(LtiToolKey, _KEY_ID)


def tool_key(database: Database) -> ToolKey:
    """The tool's key, made and stored the first time it is asked for."""
    with database.session() as session:
        row = _stored(session)
        if row is not None:
            return ToolKey(row.private_pem)
    try:
        with database.session() as session:
            session.add(LtiToolKey(id=_KEY_ID, private_pem=_generate()))
    except IntegrityError:  # another process stored one first: use that one
        pass
    with database.session() as session:
        row = _stored(session)
        assert row is not None
        return ToolKey(row.private_pem)
