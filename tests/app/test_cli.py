"""`autograder` keeps the engine's commands and adds the service's: keys, serve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.api_keys import find_key
from app.db import Database

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AUTOGRADER, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_keys_create_prints_a_key_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path)}
    result = run("keys", "create", "--name", "lms", env=env)
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip()
    assert key.startswith("agk_")
    assert "shown once" in result.stderr
    database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
    try:
        with database.session() as session:
            row = find_key(session, key)
            assert row is not None and row.name == "lms"
        assert key.encode() not in (tmp_path / "autograder.db").read_bytes()
    finally:
        database.close()


def test_serve_refuses_a_public_address_without_keys(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_REQUIRE_API_KEYS": "false"}
    result = run("serve", "--host", "0.0.0.0", "--port", "1", env=env)
    assert result.returncode == 2
    assert "without API keys" in result.stderr


def test_the_engine_commands_keep_their_behaviour(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path)}
    listed = run("exercises", "--json", env=env)
    assert listed.returncode == 0
    assert "multi-headed-self-attention" in {row["slug"] for row in json.loads(listed.stdout)}
    unknown = run("grade", "no-such-exercise", __file__, env=env)
    assert unknown.returncode == 2
    assert run("frobnicate", env=env).returncode == 2  # argparse's usage error


def test_lti_add_platform_stores_a_registration_and_updates_it(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path)}
    common = [
        "lti",
        "add-platform",
        "--issuer",
        "https://canvas.test",
        "--client-id",
        "10000000000001",
        "--auth-login-url",
        "https://canvas.test/api/lti/authorize_redirect",
        "--auth-token-url",
        "https://canvas.test/login/oauth2/token",
        "--key-set-url",
        "https://canvas.test/api/lti/security/jwks",
    ]
    first = run(*common, "--deployment-id", "1:abc", env=env)
    assert first.returncode == 0, first.stderr
    assert "platform 1: https://canvas.test" in first.stdout
    again = run(*common, "--deployment-id", "1:abc", "--deployment-id", "2:def", env=env)
    assert again.returncode == 0, again.stderr
    assert "platform 1:" in again.stdout and "1:abc, 2:def" in again.stdout


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "AUTOGRADER_DATA_DIR": str(tmp_path)}
    with subprocess.Popen(
        [AUTOGRADER, "exercises"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as listing:
        assert listing.stdout is not None and listing.stderr is not None
        listing.stdout.close()  # before the command writes a line (it imports torch first)
        errors = listing.stderr.read().decode()
        assert listing.wait(timeout=120) == 1
    assert "Traceback" not in errors
