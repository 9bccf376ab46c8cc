"""The tool's private key at rest, on SQLite and PostgreSQL: stored encrypted under the master
secret, the same key (JWKS) every time it is read, a key stored in clear by an earlier version
encrypted on first read, and a key under another secret refused in words. Signing with it is
proven end to end by the launches and deep links of test_lti."""

from __future__ import annotations

import pytest
from app_support import ClientFactory, SettingsFactory
from pydantic import SecretStr

from app.core.db import Database
from app.core.settings import AppSettings
from app.lti.models import LtiToolKey
from app.lti.tool_key import ToolKeyUnreadable, _generate, tool_key


def stored(database: Database) -> str:
    with database.session() as session:
        row = session.get(LtiToolKey, 1)
        assert row is not None
        return row.private_pem


def test_the_private_key_is_stored_encrypted(database: Database, settings: AppSettings) -> None:
    key = tool_key(database, settings)
    assert "PRIVATE KEY" in key.private_pem
    assert "PRIVATE KEY" not in stored(database)
    assert tool_key(database, settings).jwks() == key.jwks()


def test_a_key_stored_in_clear_is_encrypted_on_first_read(
    database: Database, settings: AppSettings
) -> None:
    clear = _generate()
    with database.session() as session:
        session.add(LtiToolKey(id=1, private_pem=clear))
    assert tool_key(database, settings).private_pem == clear
    assert "PRIVATE KEY" not in stored(database)
    assert tool_key(database, settings).private_pem == clear


def test_a_key_under_another_secret_is_refused(database: Database, settings: AppSettings) -> None:
    tool_key(database, settings)
    other = settings.model_copy(update={"secret": SecretStr("another secret")})
    with pytest.raises(ToolKeyUnreadable, match="AUTOGRADER_SECRET"):
        tool_key(database, other)
    assert tool_key(database, settings).jwks()  # nothing was overwritten


def test_a_key_under_another_secret_puts_lti_out_of_service_in_words(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    first = make_client(make_settings())
    assert first.get("/lti/jwks").status_code == 200  # the key is made under test-secret
    moved = make_client(make_settings(secret="a secret lost and remade"))
    response = moved.get("/lti/jwks")
    assert response.status_code == 503
    assert response.json()["detail"].endswith("encrypted under another AUTOGRADER_SECRET")
