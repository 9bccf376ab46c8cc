"""`autograder lti contexts list|bind|unbind`: the operator sees the LMS courses seen (with
their titles) and binds them to courses by hand; `lti add-platform --contexts` sets a platform's
policy."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import run

from app.core.db import Database
from app.core.models import utcnow
from app.lti.models import LtiContext

PLATFORM = [
    "lti", "add-platform", "--issuer", "https://moodle.test", "--client-id", "c1",
    "--auth-login-url", "https://moodle.test/mod/lti/auth.php",
    "--auth-token-url", "https://moodle.test/mod/lti/token.php",
    "--key-set-url", "https://moodle.test/mod/lti/certs.php",
]  # fmt: skip
HEADER = "platform\tdeployment\tcontext\ttitle\tlabel\tcourse\trefused\tseen"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = {"AUTOGRADER_DATA_DIR": str(tmp_path)}
    added = run(*PLATFORM, "--deployment-id", "1", "--course", "ml-101", env=env)
    assert added.returncode == 0, added.stderr
    assert "refused until their LMS course is bound" in added.stdout
    return env


def seen_refused(tmp_path: Path, context_id: str, title: str) -> None:
    """What a launch from an LMS course bound to none of ours records."""
    database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
    try:
        with database.session() as session:
            session.add(
                LtiContext(
                    platform_id=1, deployment_id="1", context_id=context_id, title=title,
                    label="DL101", refused_launches=2, last_seen_at=utcnow(),
                )
            )  # fmt: skip
    finally:
        database.close()


def listed(env: dict[str, str]) -> tuple[list[list[str]], str]:
    """The table's rows, without the time last seen, and what is said on stderr."""
    result = run("lti", "contexts", "list", env=env)
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header == HEADER
    return [row.split("\t")[:-1] for row in rows], result.stderr


def test_an_operator_binds_a_seen_lms_course_and_unbinds_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    assert listed(env) == (
        [],
        "platform 1 (https://moodle.test) binds no LMS course: all its launches are refused. "
        "Bind its course's context: autograder lti contexts bind --platform 1 --context CONTEXT "
        "(to the course 'ml-101')\n",
    )
    seen_refused(tmp_path, "42", "Deep learning 2026")
    assert listed(env)[0] == [["1", "1", "42", "Deep learning 2026", "DL101", "-", "2"]]

    bound = run("lti", "contexts", "bind", "--platform", "1", "--context", "42", env=env)
    assert bound.returncode == 0, bound.stderr
    assert bound.stdout == (
        "bound context '42' (Deep learning 2026) of platform 1 to the course 'ml-101'\n"
    )
    assert listed(env) == ([["1", "1", "42", "Deep learning 2026", "DL101", "ml-101", "2"]], "")
    # Bound to one course, it is not moved to another without being unbound first.
    moved = run(
        "lti", "contexts", "bind", "--platform", "1", "--context", "42", "--course", "other",
        env=env,
    )  # fmt: skip
    assert moved.returncode == 2
    assert "bound to the course 'ml-101'; unbind it first" in moved.stderr

    unbound = run("lti", "contexts", "unbind", "--platform", "1", "--context", "42", env=env)
    assert unbound.returncode == 0, unbound.stderr
    assert "its launches are refused; the course keeps its work" in unbound.stdout
    rows, said = listed(env)
    assert rows == [["1", "1", "42", "Deep learning 2026", "DL101", "-", "2"]]
    assert "binds no LMS course" in said
    again = run("lti", "contexts", "unbind", "--platform", "1", "--context", "42", env=env)
    assert again.returncode == 2 and "is bound to no course" in again.stderr


def test_an_lms_course_not_launched_yet_is_bound_to_the_course_named(
    env: dict[str, str],
) -> None:
    bound = run(
        "lti", "contexts", "bind", "--platform", "1", "--context", "7", "--course", "dl-2027",
        env=env,
    )  # fmt: skip
    assert bound.returncode == 0, bound.stderr
    assert "context '7' (not launched yet)" in bound.stdout and "'dl-2027'" in bound.stdout
    assert listed(env)[0] == [["1", "1", "7", "-", "-", "dl-2027", "0"]]


def test_a_bind_names_a_deployment_of_the_platform(env: dict[str, str]) -> None:
    two = run(*PLATFORM, "--deployment-id", "1", "--deployment-id", "2", env=env)
    assert two.returncode == 0, two.stderr
    bind = ["lti", "contexts", "bind", "--platform", "1", "--context", "42"]
    unnamed = run(*bind, env=env)
    assert unnamed.returncode == 2
    assert "name one of platform 1's deployments with --deployment: 1, 2" in unnamed.stderr
    assert run(*bind, "--deployment", "3", env=env).returncode == 2
    assert run(*bind, "--deployment", "2", env=env).returncode == 0
    unknown = run("lti", "contexts", "bind", "--platform", "9", "--context", "42", env=env)
    assert unknown.returncode == 2 and "no platform has id 9" in unknown.stderr


def test_a_platform_gives_lms_courses_their_own_courses_when_told(env: dict[str, str]) -> None:
    own = run(*PLATFORM, "--deployment-id", "1", "--contexts", "own", env=env)
    assert own.returncode == 0, own.stderr
    assert "refused" not in own.stdout
    platforms = run("lti", "platforms", "list", env=env).stdout.splitlines()
    assert platforms == [
        "id\tissuer\tclient\tdeployments\tcontexts",
        "1\thttps://moodle.test\tc1\t1\town",
    ]
    assert listed(env) == ([], "")  # its LMS courses need no binding by hand
