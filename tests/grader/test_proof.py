"""`autograder check-exercise` and `new-exercise` on exercises written for the test: a broken
one gets a line naming each problem's file, a skeleton fails until filled in, and the exit codes
hold (0 proved, 1 problems, 2 invalid folder or refused slug)."""

from __future__ import annotations

import re
import shutil
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from pydantic import ValidationError

import reference
from grader import cli
from grader.catalog import Catalog
from grader.proof import MIN_SOLUTIONS
from grader.proof_files import MistakeSpec
from grader.settings import GraderSettings
from grader.spec import load_exercise

SLUG = "scaled-dot-product-attention"  # a function: the quickest exercise to grade
SOURCE = GraderSettings().exercises_dir / SLUG
TO_PUBLISH = f"run `autograder check-exercise {SLUG}`"
SOLUTIONS = (
    "add_mask_then_softmax",
    "logsumexp_softmax",
    "notebook_style",
    "typing_einsum_ellipsis",
)
MISTAKES = {
    "boolean_keep_mask": "boolean-keep-mask",
    "missing_scaling": "missing-scaling",
    "scaled_by_d_k": "scaled-by-d-k",
    "softmax_over_queries": "softmax-over-queries",
}

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def exercises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty exercises folder for the commands, and the working directory its parent, so that
    the paths they print read `exercises/<slug>/...`."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "grader.settings.get_settings", lambda: GraderSettings(exercises_dir=folder)
    )
    return folder


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def run_command(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run_command


def copy_of_the_exercise(exercises: Path, mistakes: Mapping[str, str | None] = MISTAKES) -> Path:
    """The scaled dot-product exercise with four solutions, and `mistakes` (file name:
    declared diagnosis) declared as such."""
    folder = exercises / SLUG
    shutil.copytree(SOURCE, folder, ignore=shutil.ignore_patterns("*.py", "mistakes.toml"))
    shutil.copy(SOURCE / "starter.py", folder)
    for name in SOLUTIONS:
        shutil.copy(SOURCE / "solutions" / f"{name}.py", folder / "solutions")
    for name, diagnosis in mistakes.items():
        if (SOURCE / "mistakes" / f"{name}.py").exists():
            shutil.copy(SOURCE / "mistakes" / f"{name}.py", folder / "mistakes")
        entry = f'[{name}]\ndescription = "written for the test"\n'
        entry += f'diagnosis = "{diagnosis}"\n' if diagnosis else ""
        with (folder / "mistakes" / "mistakes.toml").open("a", encoding="utf-8") as file:
            file.write(entry)
    return folder


def problems(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("PROBLEM ")]


@pytest.mark.slow
def test_an_exercise_that_holds_exits_0(exercises: Path, run: Run) -> None:
    folder = copy_of_the_exercise(exercises)
    (folder / "proof.toml").unlink()  # the repository's, for its other files
    assert Catalog.scan(exercises).drafts() == {SLUG: f"not proven: {TO_PUBLISH}"}

    code, out, _ = run("check-exercise", SLUG)

    assert problems(out) == []
    version = load_exercise(folder).version
    assert out.splitlines()[-2:] == [
        f"{SLUG} holds (exercises/{SLUG})",
        f"published at version {version}: recorded in exercises/{SLUG}/proof.toml",
    ]
    assert Catalog.scan(exercises).drafts() == {}
    assert code == 0
    recorded = (folder / "proof.toml").read_text()
    assert run("check-exercise", SLUG)[0] == 0
    assert (folder / "proof.toml").read_text() == recorded  # a proof run again changes no file


@pytest.mark.slow
def test_each_problem_gets_a_line_naming_its_file(exercises: Path, run: Run) -> None:
    folder = copy_of_the_exercise(
        exercises, {**MISTAKES, "scaled_by_d_k": "missing-scaling", "not_a_mistake": None}
    )
    right = SOURCE / "solutions" / f"{SOLUTIONS[0]}.py"
    shutil.copy(right, folder / "starter.py")
    shutil.copy(right, folder / "mistakes" / "not_a_mistake.py")
    shutil.copy(SOURCE / "mistakes" / "missing_scaling.py", folder / "solutions" / "unscaled.py")
    refused = "import os\n" + right.read_text(encoding="utf-8")
    (folder / "solutions" / "with_os.py").write_text(refused, encoding="utf-8")
    with (folder / "exercise.toml").open("a", encoding="utf-8") as spec:  # the first test again
        spec.write('[[tests]]\nname = "twin"\nseed = 99\ninputs = [{ shape = [1, 4, 8] }, ')
        spec.write("{ shape = [1, 4, 8] }, { shape = [1, 4, 8] }]\n")
        spec.write('[[promises]]\ncase = "a batch of 7"\ninput = 0\naxis = 0\nequals = 7\n')
    assert (folder / "proof.toml").is_file()  # copied with the rest

    code, out, _ = run("check-exercise", SLUG)

    where = f"PROBLEM exercises/{SLUG}"
    found = problems(out)
    assert found.pop(0) == (
        f"{where}/exercise.toml: no hidden test exercises the promised case 'a batch of 7' "
        "(input 0, axis 0 = 7): add one"
    )
    assert found[0] == (
        f"{where}/starter.py: passes 13 of 13 tests: a starter must fail every test: leave the "
        "work undone (raise NotImplementedError)"
    )
    assert found[1].startswith(f"{where}/solutions/unscaled.py: fails 'batch 1, no heads axis")
    assert found[2].startswith(
        f"{where}/solutions/with_os.py: refused (Nothing ran: line 1: importing `os` is not "
    )
    assert found[3].startswith(
        f"{where}/mistakes/not_a_mistake.py: passes every visible test: add or change a visible "
    )
    assert found[4].startswith(
        f"{where}/mistakes/scaled_by_d_k.py: gets diagnosis scaled-by-d-k, mistakes.toml "
        "declares missing-scaling (this exercise's codes: boolean-keep-mask, gradient-mismatch, "
        "missing-scaling, no-autograd-graph, not-allowed, numerically-unstable, scaled-by-d-k, "
        "softmax-over-queries)"
    )
    assert len(found) == 5
    warnings = [line for line in out.splitlines() if line.startswith("warning ")]
    assert any(
        "tests 'batch 1, no heads axis, no mask', " in line
        and "'twin' catch exactly the same mistakes" in line
        for line in warnings
    )
    assert re.search(r"^  not_a_mistake +( \.  ){13} -$", out, re.MULTILINE)  # caught by none
    # A record left would still name this version were only the grader changed since.
    assert out.splitlines()[-1] == "a draft: students do not see it (its proof record removed)"
    assert not (folder / "proof.toml").exists()
    assert code == 1


@pytest.mark.slow
def test_a_hidden_test_that_mistakes_pass_is_a_warning_naming_both(
    exercises: Path, run: Run
) -> None:
    folder = copy_of_the_exercise(exercises)
    with (folder / "exercise.toml").open("a", encoding="utf-8") as spec:  # a softmax over 1 key
        spec.write('[[tests]]\nname = "one token"\nvisibility = "hidden"\ninputs = [')
        spec.write("{ shape = [2, 1, 8] }, { shape = [2, 1, 8] }, { shape = [2, 1, 8] }]\n")

    code, out, _ = run("check-exercise", SLUG)

    warnings = [line for line in out.splitlines() if line.startswith("warning ")]
    assert (
        f"warning exercises/{SLUG}/exercise.toml: hidden test 'one token' gives its points to "
        "known mistakes that fail every visible test (missing_scaling, scaled_by_d_k, "
        "softmax_over_queries): give it a case they get wrong (at least two tokens where it is "
        "about attention), unless it keeps a promise they are right on"
    ) in warnings
    # boolean_keep_mask passes it too, and the visible tests without a mask: not warned of.
    assert not any("boolean_keep_mask" in line and "hidden test" in line for line in warnings)
    assert re.search(r"^  boolean_keep_mask +( [x.]  ){12} \.  ", out, re.MULTILINE)
    assert (problems(out), code) == ([], 0)


def test_an_invalid_mistakes_file_exits_2_before_grading(exercises: Path, run: Run) -> None:
    copy_of_the_exercise(exercises, {"boolean_keep_mask": "Not A Code"})
    code, out, err = run("check-exercise", "--all")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()  # one line per fault: file, field, what is expected
    assert line.startswith("autograder: ")
    assert "/mistakes/mistakes.toml: boolean_keep_mask.diagnosis: " in line


def test_an_unknown_exercise_exits_2(exercises: Path, run: Run) -> None:
    code, _, err = run("check-exercise", "no-such-exercise")
    assert code == 2
    assert "unknown exercise 'no-such-exercise'" in err


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (("new-exercise", "Not_A_Slug"), "invalid slug 'Not_A_Slug'"),
        (("new-exercise", "np-layer", "--kind", "module", "--framework", "numpy"), "a function"),
        (("new-exercise", SLUG), "exists already"),
    ],
)
def test_new_exercise_refuses_in_one_line(
    exercises: Path, run: Run, argv: tuple[str, ...], complaint: str
) -> None:
    copy_of_the_exercise(exercises)
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert complaint in err
    assert len(err.splitlines()) == 1


@pytest.mark.slow
def test_an_unfilled_skeleton_fails_with_what_to_fill_in(
    exercises: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The skeleton's reference goes to reference/ beside the exercises: make it importable.
    monkeypatch.setattr(
        reference, "__path__", [*reference.__path__, str(exercises.parent / "reference")]
    )
    # ... and forget it afterwards: the module it imports is recorded as absent, then removed.
    monkeypatch.setitem(sys.modules, "reference.causal_attention", None)
    monkeypatch.delitem(sys.modules, "reference.causal_attention")
    assert run("new-exercise", "causal-attention")[0] == 0

    code, out, _ = run("check-exercise", "causal-attention")

    folder = "exercises/causal-attention"
    marked = {
        line.split(":")[0].removeprefix("PROBLEM ") for line in problems(out) if "FILL IN" in line
    }
    assert marked == {
        f"{folder}/exercise.toml",
        f"{folder}/statement.md",
        f"{folder}/starter.py",
        f"{folder}/solutions/fill_in_solution.py",
        f"{folder}/mistakes/fill_in_mistake.py",
        f"{folder}/mistakes/mistakes.toml",
        "reference/causal_attention.py",
    }
    assert (
        "PROBLEM reference/causal_attention.py: CausalAttention reference failed on batch 1 "
        "(NotImplementedError): fix the reference"
    ) in out
    assert (
        f"PROBLEM {folder}/solutions/: has 1, needs at least {MIN_SOLUTIONS}: add correct files "
        "in the styles students write"
    ) in out
    # The seed exercises' imports: a notebook's leftover `import numpy as np` is not refused.
    spec = tomllib.loads((exercises / "causal-attention" / "exercise.toml").read_text())
    assert spec["allowed_imports"] == ["torch", "numpy"]
    assert code == 1


def test_also_declares_the_other_of_two_mistakes_made_together() -> None:
    both = MistakeSpec(description="two at once", diagnosis="missing-scaling", also="no-mask")
    assert both.diagnoses == ["missing-scaling", "no-mask"]
    for alone in ({"also": "no-mask"}, {"diagnosis": "no-mask", "also": "no-mask"}):
        with pytest.raises(ValidationError):
            MistakeSpec.model_validate({"description": "one", **alone})
