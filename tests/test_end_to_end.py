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


def test_cli_leads_with_the_diagnosis_and_reproduces_every_failing_test_on_request() -> None:
    result = _cli("grade", SEED_EXERCISE, str(MISSING_SCALING), "--reproduce")
    assert result.returncode == 1
    report, _, code = result.stdout.partition("# The visible test ")
    assert report.index("Diagnosis:") < report.index("Tests:") < report.index("FAIL  16 heads")
    assert "Properties:" in report
    failing = report.count("  visible  0/")
    assert failing == report.count("  visible  ") > 0  # every visible test fails
    assert code.count("# The visible test ") == failing - 1


def test_the_code_printed_for_a_test_runs_the_submission_at_home(tmp_path: Path) -> None:
    result = _cli("grade", SEED_EXERCISE, str(MISSING_SCALING), "--reproduce", "16 heads")
    code = result.stdout[result.stdout.index("# The visible test ") :]
    assert code.startswith('# The visible test "16 heads" of multi-headed-self-attention')
    assert code.count("# The visible test ") == 1
    (tmp_path / "solution.py").write_text(MISSING_SCALING.read_text())
    (tmp_path / "reproduce.py").write_text(code)
    run = subprocess.run(
        [sys.executable, "reproduce.py"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("tensor([[[")


@pytest.mark.parametrize(
    ("test", "complaint"), [("one head", "is a hidden test"), ("no such test", "is no test")]
)
def test_only_a_visible_test_is_reproduced(test: str, complaint: str) -> None:
    result = _cli("grade", SEED_EXERCISE, str(MISSING_SCALING), "--reproduce", test)
    assert result.returncode == 2
    assert complaint in result.stderr and result.stdout == ""
