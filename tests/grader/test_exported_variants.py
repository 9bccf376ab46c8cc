"""A mistakes/ file declared as a variant (as staff export a group they named): loaded with the
reference's variants, diagnosed by its own code, proven, and part of the exercise's version."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_proof import SLUG, copy_of_the_exercise

from grader import cli
from grader.catalog import Catalog
from grader.errors import ExerciseDefinitionError
from grader.plan_building import build_plan
from grader.proof_files import load_proof_files
from grader.reference import Reference
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings
from grader.spec import load_exercise

NAME = "scores_times_sqrt_d_k"
CODE = "scores-times-sqrt-d-k"
MESSAGE = "Your scores are multiplied by sqrt(d_k): divide them by it"
SOURCE = """import math

import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) * math.sqrt(q.size()[-1])
    if mask is not None:
        scores = scores + mask
    attention = torch.softmax(scores, dim=-1)
    return torch.matmul(attention, v), attention
"""
DECLARATION = f"""
[{NAME}]
description = "multiplies the scores by sqrt(d_k) instead of dividing"
diagnosis = "{CODE}"
variant = {{ message = "{MESSAGE}", concepts = ["scaling"] }}
"""


@pytest.fixture
def exercises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the scaled dot-product exercise with the exported variant, its folder's parent
    the working directory (so that paths print as `exercises/<slug>/...`)."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "grader.settings.get_settings", lambda: GraderSettings(exercises_dir=folder)
    )
    exported = copy_of_the_exercise(folder)
    (exported / "mistakes" / f"{NAME}.py").write_text(SOURCE)
    with (exported / "mistakes" / "mistakes.toml").open("a", encoding="utf-8") as file:
        file.write(DECLARATION)
    return folder


def test_the_file_joins_the_reference_s_variants(exercises: Path) -> None:
    exercise = load_exercise(exercises / SLUG)
    exported = Reference.load(exercise).variants[-1]
    assert (exported.code, exported.message, exported.concepts) == (CODE, MESSAGE, ("scaling",))
    plan = build_plan(exercise, secret="test-secret")
    [mistake] = [mistake for mistake in plan.mistakes if mistake.code == CODE]
    assert all(outputs is not None for outputs in mistake.outputs.values())


@pytest.mark.slow
def test_the_file_is_diagnosed_by_its_own_code_and_proven(exercises: Path) -> None:
    code = cli.main(["check-exercise", SLUG])
    assert code == 0
    catalog = Catalog.from_folder(exercises)
    sandbox = WarmProcessSandbox(slots=1)
    try:
        report = Grader(catalog, sandbox, "test-secret").grade(SLUG, SOURCE)
    finally:
        sandbox.close()
    assert [(finding.code, finding.message) for finding in report.diagnosis] == [(CODE, MESSAGE)]


def test_the_exercise_s_version_changes_with_the_file(exercises: Path) -> None:
    before = load_exercise(exercises / SLUG).version
    path = exercises / SLUG / "mistakes" / f"{NAME}.py"
    path.write_text(SOURCE.replace("math.sqrt", "2 * math.sqrt"))
    assert load_exercise(exercises / SLUG).version != before


def test_a_variant_without_the_entry_point_is_a_definition_error(exercises: Path) -> None:
    (exercises / SLUG / "mistakes" / f"{NAME}.py").write_text("def attention(q, k, v):\n    pass\n")
    with pytest.raises(ExerciseDefinitionError, match=f"mistakes/{NAME}.py"):
        Reference.load(load_exercise(exercises / SLUG))


@pytest.mark.parametrize(
    ("declared", "wrong"),
    [
        ('concepts = ["not-a-concept"]', "not-a-concept"),
        ("message = ''", "message"),
    ],
)
def test_a_malformed_variant_is_refused(exercises: Path, declared: str, wrong: str) -> None:
    toml = exercises / SLUG / "mistakes" / "mistakes.toml"
    fields = f'message = "{MESSAGE}", {declared}' if "concepts" in declared else declared
    toml.write_text(
        toml.read_text().replace(DECLARATION.splitlines()[-1], f"variant = {{ {fields} }}")
    )
    with pytest.raises(ExerciseDefinitionError, match=wrong):
        load_proof_files(exercises / SLUG)
