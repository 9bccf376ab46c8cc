"""The engine's command line end to end, through the real sandbox: `autograder grade` keeps its
exit codes and its output. That every exercise's files get their verdicts through the same
grader is `tests/exercises/test_proofs.py`'s (`autograder check-exercise --all`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SEED_EXERCISE = "multi-headed-self-attention"
EXERCISE = Path(__file__).resolve().parent.parent / "exercises" / SEED_EXERCISE
CORRECT = EXERCISE / "solutions" / "neetcode_common_answer.py"
MISSING_SCALING = EXERCISE / "mistakes" / "missing_scaling.py"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"AUTOGRADER_SECRET": "cli-test"}
    command = [sys.executable, "-m", "grader.cli", *args]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=120
    )


def test_cli_grades_a_correct_file_with_exit_0_and_json() -> None:
    result = _cli("grade", SEED_EXERCISE, str(CORRECT), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "passed"
    assert {"exercise", "score", "max_score", "tests", "diagnosis"} <= report.keys()


def test_cli_exits_1_on_a_wrong_file_and_explains_in_text() -> None:
    result = _cli("grade", SEED_EXERCISE, str(MISSING_SCALING))
    assert result.returncode == 1
    assert "1/sqrt(d)" in result.stdout


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("grade", "no-such-exercise", __file__), "unknown exercise"),
        (("grade", SEED_EXERCISE, "/no/such/file.py"), "cannot read"),
        (("grade",), "usage"),
    ],
)
def test_cli_usage_errors_exit_2(args: tuple[str, ...], complaint: str) -> None:
    result = _cli(*args)
    assert result.returncode == 2
    assert complaint in result.stderr
