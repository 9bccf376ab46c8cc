"""Every file of the solution corpus, `exercises/*/solutions/*.py` (correct solutions written the
way students write them), passes its exercise with full marks through the real sandbox."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.catalog import Catalog
from grader.report import ReportStatus, TestStatus
from grader.runner import Grader
from grader.sandbox.process import ForkServerSandbox
from grader.settings import GraderSettings

pytestmark = pytest.mark.slow

EXERCISES = GraderSettings().exercises_dir
SOLUTIONS = sorted(EXERCISES.glob("*/solutions/*.py"))


def _slug(path: Path) -> str:
    return path.parent.parent.name


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    sandbox = ForkServerSandbox(slots=2)
    try:
        yield Grader(Catalog.from_folder(EXERCISES), sandbox, secret="solutions")
    finally:
        sandbox.close()


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: f"{_slug(path)}/{path.name}")
def test_a_correct_solution_passes_with_full_marks(grader: Grader, path: Path) -> None:
    report = grader.grade(_slug(path), path.read_text())
    failures = [
        f"{test.name} ({test.status.value}): {test.message}"
        for test in report.tests
        if test.status is not TestStatus.PASSED
    ]
    assert report.status is ReportStatus.PASSED, "\n".join([report.message, *failures])
    assert report.score == report.max_score, "\n".join(failures)
