"""`autograder` keeps the engine's commands and adds the service's: keys, students, serve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.access.api_keys import find_key
from app.core.db import Database
from app.core.models import Role

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
    result = run(
        "keys", "create", "--course", "ml-101", "--role", "submitter", "--name", "lms", env=env
    )
    assert result.returncode == 0, result.stderr
    key = result.stdout.splitlines()[-1]  # alone on the last line: scripts rely on it
    assert key == result.stdout.strip() and key.startswith("agk_")
    assert "shown once" in result.stderr
    database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
    try:
        with database.session() as session:
            row = find_key(session, key)
            assert row is not None and (row.name, row.role) == ("lms", Role.SUBMITTER)
        assert key.encode() not in (tmp_path / "autograder.db").read_bytes()
    finally:
        database.close()

    listed = run("keys", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    header, line = listed.stdout.splitlines()
    assert header.split("\t") == ["prefix", "course", "role", "name", "created", "revoked"]
    assert line.split("\t")[:4] == [key[:8], "ml-101", "submitter", "lms"]
    assert line.endswith("\t-")

    assert run("keys", "revoke", "agk_nope", env=env).returncode == 2
    revoked = run("keys", "revoke", key[:8], env=env)
    assert revoked.returncode == 0, revoked.stderr
    assert not run("keys", "list", env=env).stdout.splitlines()[1].endswith("\t-")
    database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
    try:
        with database.session() as session:
            assert find_key(session, key) is None  # a revoked key opens nothing
    finally:
        database.close()


def test_a_course_name_is_checked(tmp_path: Path) -> None:
    result = run("keys", "create", "--course", "ML 101", env={"AUTOGRADER_DATA_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert "lowercase" in result.stderr


def test_serve_refuses_a_public_address_without_keys(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_REQUIRE_API_KEYS": "false"}
    result = run("serve", "--host", "0.0.0.0", "--port", "1", env=env)
    assert result.returncode == 2
    assert "without API keys" in result.stderr
    # Behind a proxy on the same host, loopback is the whole world's: keys are required too.
    behind = run("serve", "--port", "1", env={**env, "AUTOGRADER_TRUSTED_PROXIES": "127.0.0.1"})
    assert behind.returncode == 2
    assert "trusted proxy" in behind.stderr


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

    listed = run("lti", "platforms", "list", env=env).stdout.splitlines()
    assert listed == [
        "id\tissuer\tclient\tdeployments\tcontexts",
        "1\thttps://canvas.test\t10000000000001\t1:abc,2:def\tbound",
    ]
    assert run("lti", "platforms", "remove", "7", env=env).returncode == 2
    assert run("lti", "platforms", "remove", "1", env=env).returncode == 0
    assert run("lti", "platforms", "list", env=env).stdout.splitlines()[1:] == []


def test_an_lms_url_must_be_https_but_on_loopback(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path)}
    urls = ["--auth-login-url", "javascript:alert(1)", "--auth-token-url", "http://lms.test/t"]
    refused = run(
        "lti", "add-platform", "--issuer", "https://lms.test", "--client-id", "c",
        "--deployment-id", "d", *urls, "--key-set-url", "http://127.0.0.1:9/jwks", env=env,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "must be an https:// URL" in refused.stderr


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


def test_students_link_prints_the_page_url_and_revoke_ends_it(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_PUBLIC_URL": "https://grader.test/"}
    assert run("keys", "create", "--course", "ml-101", env=env).returncode == 0
    result = run("students", "link", "--course", "ml-101", "--student", "ada", env=env)
    assert result.returncode == 0, result.stderr
    url = result.stdout.splitlines()[-1]  # alone on the last line: scripts rely on it
    assert url == result.stdout.strip()
    assert url.startswith("https://grader.test/exercises#student_token=ags_")
    assert "--student ada` ends it" in result.stderr
    one = run(
        "students", "link", "--course", "ml-101", "--student", "ada", "--expires", "2w",
        "--exercise", "multi-headed-self-attention", env=env,
    )  # fmt: skip
    assert one.stdout.startswith("https://grader.test/exercises/multi-headed-self-attention#")

    listed = run("students", "links", "--course", "ml-101", env=env).stdout.splitlines()
    assert listed[0].split("\t") == ["id", "course", "student", "created", "expires", "revoked"]
    assert [line.split("\t")[1:3] for line in listed[1:]] == [["ml-101", "ada"]] * 2
    revoked = run("students", "revoke", "--course", "ml-101", "--student", "ada", env=env)
    assert revoked.stdout.strip() == "revoked 2 live link(s) of 'ada' in course 'ml-101'"
    listed = run("students", "links", env=env).stdout.splitlines()
    assert all(not line.endswith("\t-") for line in listed[1:])


def test_students_link_needs_the_public_url_and_a_course_that_exists(tmp_path: Path) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path)}
    assert run("keys", "create", "--course", "ml-101", env=env).returncode == 0
    student = ("--student", "ada")
    no_url = run("students", "link", "--course", "ml-101", *student, env=env)
    env["AUTOGRADER_PUBLIC_URL"] = "https://grader.test"
    typo = run("students", "link", "--course", "ml-1O1", *student, env=env)
    for result, why in [(no_url, "set AUTOGRADER_PUBLIC_URL"), (typo, "no course 'ml-1O1'")]:
        assert result.returncode == 2
        assert why in result.stderr and len(result.stderr.splitlines()) == 1


def test_students_link_takes_the_id_in_its_normal_form_and_refuses_invisible_ones(
    tmp_path: Path,
) -> None:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_PUBLIC_URL": "https://grader.test/"}
    assert run("keys", "create", "--course", "ml-101", env=env).returncode == 0
    spelled = run("students", "link", "--course", "ml-101", "--student", " Ada ", env=env)
    assert spelled.returncode == 0, spelled.stderr
    assert spelled.stderr.startswith("Link for 'ada' of course 'ml-101'")
    hidden = run("students", "link", "--course", "ml-101", "--student", "ada\u200b", env=env)
    assert hidden.returncode == 2
    assert "invisible or control characters (U+200B)" in hidden.stderr
    assert len(hidden.stderr.splitlines()) == 1
    revoked = run("students", "revoke", "--course", "ml-101", "--student", "ADA", env=env)
    assert revoked.stdout.startswith("revoked 1 live link(s)"), revoked.stdout


def test_students_link_says_its_exercise_only_picks_the_page_it_opens_on() -> None:
    help_text = " ".join(run("students", "link", "--help", env={}).stdout.split())
    assert "still lets the student into every exercise of the course" in help_text
