"""Whole-engine tests through the real sandbox: correct solutions pass, starters fail, each
common mistake of an exercise is diagnosed, and the CLI keeps its exit codes."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.catalog import Catalog
from grader.report import ReportStatus, TestStatus
from grader.runner import Grader
from grader.sandbox.process import ForkServerSandbox
from grader.settings import GraderSettings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = ROOT / "tests" / "submissions"
CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)
SEED_EXERCISE = "multi-headed-self-attention"
PROJECTION_EXERCISE = "multi-headed-self-attention-projection"
ATTENTION_FUNCTION = "scaled-dot-product-attention"


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    sandbox = ForkServerSandbox(slots=2)
    try:
        yield Grader(CATALOG, sandbox, secret="end-to-end")
    finally:
        sandbox.close()


@pytest.mark.parametrize("slug", CATALOG.slugs())
def test_a_correct_solution_passes_every_test(grader: Grader, slug: str) -> None:
    report = grader.grade(slug, (SUBMISSIONS / slug / "correct.py").read_text())
    failures = [f"{t.name}: {t.message}" for t in report.tests if t.status is not TestStatus.PASSED]
    assert failures == []
    assert report.status is ReportStatus.PASSED
    assert report.score == report.max_score
    assert all(check.status.value == "passed" for check in report.properties)


@pytest.mark.parametrize("slug", CATALOG.slugs())
def test_the_starter_fails(grader: Grader, slug: str) -> None:
    report = grader.grade(slug, CATALOG.get(slug).starter)
    assert report.status is ReportStatus.FAILED
    assert report.score == 0


# Per exercise: the submission file under tests/submissions/<slug>/ and the one diagnosis it gets.
MISTAKES = {
    SEED_EXERCISE: {
        "missing_scaling": "missing-scaling",
        "no_causal_mask": "no-causal-mask",
        "full_size_heads": "full-size-heads",
        "concat_along_sequence": "concat-along-sequence",
        "softmax_over_queries": "softmax-over-queries",
        "rounded_to_2_decimals": "rounded-to-2-decimals",
        "extra_output_projection": "extra-output-projection",
        # NeetCode's newer version, submitted to this exercise.
        "extra_output_projection_without_bias": "extra-output-projection",
        "layers_in_another_order": "weights-differ",
    },
    PROJECTION_EXERCISE: {
        "missing_scaling": "missing-scaling",
        "no_causal_mask": "no-causal-mask",
        "softmax_over_queries": "softmax-over-queries",
        "rounded_to_2_decimals": "rounded-to-2-decimals",
        "projection_with_bias": "projection-with-bias",
        "projection_before_heads": "projection-before-heads",
        "no_output_projection": "no-output-projection",
        "layers_in_another_order": "weights-differ",
    },
    ATTENTION_FUNCTION: {
        "boolean_keep_mask": "boolean-keep-mask",
    },
}


@pytest.mark.parametrize(
    ("slug", "submission", "code"),
    [(slug, file, code) for slug, files in MISTAKES.items() for file, code in files.items()],
)
def test_each_common_mistake_is_diagnosed(
    grader: Grader, slug: str, submission: str, code: str
) -> None:
    report = grader.grade(slug, (SUBMISSIONS / slug / f"{submission}.py").read_text())
    assert report.status is ReportStatus.FAILED
    assert [finding.code for finding in report.diagnosis] == [code]
    assert report.diagnosis[0].tests  # names the visible tests that show it


def test_a_missing_mask_also_breaks_the_causality_property(grader: Grader) -> None:
    source = (SUBMISSIONS / SEED_EXERCISE / "no_causal_mask.py").read_text()
    properties = {p.name: p for p in grader.grade(SEED_EXERCISE, source).properties}
    assert properties["causal"].status.value == "failed"
    assert properties["batch_independent"].status.value == "passed"


def test_a_mask_reshaped_for_4d_inputs_fails_the_3d_tests_with_a_mask(grader: Grader) -> None:
    # Passed every test before any test combined a 3-D input with the mask.
    source = (SUBMISSIONS / ATTENTION_FUNCTION / "mask_reshaped_for_heads.py").read_text()
    report = grader.grade(ATTENTION_FUNCTION, source)
    failed = {test.name for test in report.tests if test.status is not TestStatus.PASSED}
    assert failed == {
        "no heads axis, causal mask",
        "batch 1, no heads axis, values of size 3, causal mask",
    }


def test_a_crashing_submission_reports_the_exception_and_its_line(grader: Grader) -> None:
    source = (SUBMISSIONS / SEED_EXERCISE / "float_head_size.py").read_text()
    report = grader.grade(SEED_EXERCISE, source)
    first = report.tests[0]
    assert first.status is TestStatus.ERROR
    assert first.message.startswith("raised TypeError")


def test_the_forbidden_builtin_is_rejected_with_its_line(grader: Grader) -> None:
    source = (SUBMISSIONS / SEED_EXERCISE / "uses_builtin_attention.py").read_text()
    report = grader.grade(SEED_EXERCISE, source)
    assert report.status is ReportStatus.REJECTED
    assert "MultiheadAttention" in report.diagnosis[0].message
    assert report.diagnosis[0].line == 8


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"AUTOGRADER_SECRET": "cli-test"}
    command = [sys.executable, "-m", "grader.cli", *args]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=120
    )


def test_cli_grades_a_correct_file_with_exit_0_and_json() -> None:
    result = _cli("grade", SEED_EXERCISE, str(SUBMISSIONS / SEED_EXERCISE / "correct.py"), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "passed"
    assert {"exercise", "score", "max_score", "tests", "diagnosis"} <= report.keys()


def test_cli_exits_1_on_a_wrong_file_and_explains_in_text() -> None:
    result = _cli("grade", SEED_EXERCISE, str(SUBMISSIONS / SEED_EXERCISE / "missing_scaling.py"))
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
