"""`autograder export-mistake`, end to end on a copy of an exercise's folder: a group a course
named is written as a mistakes/ file and its variant entry, which the reference then loads and
the grader diagnoses by the course's code, with the course's message."""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_support import FakeSandbox, load_submission, store_submission
from pydantic import SecretStr

from app.cli import main
from app.core.db import Database
from app.core.settings import AppSettings, get_settings
from app.courses.registry import course_named
from app.grading.job import GradingContext, grade_submission
from app.staff.cluster_schemas import NameMistakeBody
from app.staff.naming import name_mistake
from grader.catalog import Catalog
from grader.reference import Reference
from grader.report import Report
from grader.runner import Grader
from grader.settings import GraderSettings
from grader.spec import load_exercise

SLUG = "scaled-dot-product-attention"
CODE = "scores-times-sqrt-d-k"
# No known mistake of the exercise explains it.
WRONG = """import math

import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) * math.sqrt(q.size()[-1])
    if mask is not None:
        scores = scores + mask
    attention = torch.softmax(scores, dim=-1)
    return torch.matmul(attention, v), attention
"""
NAME = {
    "code": CODE,
    "message": 'Your scores are multiplied by sqrt(d_k), a "scale" the other way round.',
    "fix": "Divide them by it.",
    "concepts": ["scaling"],
}


@pytest.fixture
def named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, catalog: Catalog) -> Iterator[Report]:
    """The service's database in tmp_path, where a course graded WRONG and named its group;
    returns its report before the naming."""
    monkeypatch.setenv("AUTOGRADER_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    database = Database.from_url(get_settings().sqlalchemy_url())
    database.migrate()
    settings = AppSettings(data_dir=tmp_path, secret=SecretStr("test-secret"))
    grader = Grader(catalog, FakeSandbox(), "test-secret")
    context = GradingContext(settings=settings, database=database, grader=grader, holder="here")
    with database.session() as session:
        course_id = course_named(session, "ml-101").id
    submission_id = store_submission(database, course_id=course_id, exercise=SLUG, source=WRONG)
    grade_submission(submission_id, context)
    stored = load_submission(database, submission_id).report
    assert stored is not None
    report = Report.model_validate(stored)
    assert report.diagnosis == [] and report.behaviour is not None
    with database.session() as session:
        body = NameMistakeBody.model_validate({**NAME, "behaviour_key": report.behaviour.key})
        name_mistake(session, course_named(session, "ml-101"), catalog.get(SLUG), body)
    database.close()
    yield report
    get_settings.cache_clear()


def test_a_named_mistake_is_exported_as_a_variant_the_grader_then_knows(
    named: Report, tmp_path: Path
) -> None:
    exercises = tmp_path / "exercises"
    folder = exercises / SLUG
    shutil.copytree(GraderSettings().exercises_dir / SLUG, folder)
    before = (folder / "mistakes" / "mistakes.toml").read_text()

    assert main(["export-mistake", "ml-101", SLUG, CODE, "--into", str(folder)]) == 0
    assert (folder / "mistakes" / "scores_times_sqrt_d_k.py").read_text() == WRONG
    index = (folder / "mistakes" / "mistakes.toml").read_text()
    assert index.startswith(before)
    message = f"{NAME['message']} Fix: {NAME['fix']}"
    assert tomllib.loads(index)["scores_times_sqrt_d_k"] == {
        "description": NAME["message"],
        "diagnosis": CODE,
        "variant": {"message": message, "concepts": ["scaling"]},
    }

    exercise = load_exercise(folder)
    assert (CODE, message) in {(v.code, v.message) for v in Reference.load(exercise).variants}
    report = Grader(Catalog.from_folder(exercises), FakeSandbox(), "test-secret").grade(SLUG, WRONG)
    assert [(finding.code, finding.message) for finding in report.diagnosis] == [(CODE, message)]
    assert report.score == named.score


def test_an_export_refuses_a_mistake_not_named_and_a_file_that_exists(
    named: Report, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / SLUG
    shutil.copytree(GraderSettings().exercises_dir / SLUG, folder)
    assert main(["export-mistake", "ml-101", SLUG, "heads-reversed", "--into", str(folder)]) == 2
    assert "named no mistake 'heads-reversed'" in capsys.readouterr().err
    assert main(["export-mistake", "ml-101", SLUG, CODE, "--into", str(folder)]) == 0
    assert main(["export-mistake", "ml-101", SLUG, CODE, "--into", str(folder)]) == 2
    assert "exists already" in capsys.readouterr().err
