"""The catalog: broken folders set apart with one line per fault, versions, and a new scan
served after the old one (the last good version of a folder that broke stays served)."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import reference
from grader import cli
from grader.catalog import Catalog, catalog_fingerprint
from grader.errors import ExerciseDefinitionError
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.settings import GraderSettings
from grader.spec import load_exercise

EXERCISES = GraderSettings().exercises_dir
SEED = "multi-headed-self-attention"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An exercises folder holding a copy of the seed exercise."""
    shutil.copytree(EXERCISES / SEED, tmp_path / SEED)
    return tmp_path


def edit(exercise: Path, old: str, new: str) -> None:
    toml = exercise / "exercise.toml"
    text = toml.read_text(encoding="utf-8")
    assert old in text
    toml.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ("weights =", "weight =", f"{SEED}/exercise.toml: weight: no such field (a typo?)"),
        ("title =", "# title =", f"{SEED}/exercise.toml: title: Field required"),
        ('kind = "module"', 'kind = "modul"', f"{SEED}/exercise.toml: kind: Input should be"),
        ("title =", "title", f"{SEED}/exercise.toml: -: TOML (Expected '=' after a key"),
        (
            "inputs = [{ shape = [1, 4, 8] }]",
            'inputs = [{ shape = "1, 4, 8" }]',
            f"{SEED}/exercise.toml: tests.0.inputs.0.tensor.shape: Input should be a valid tuple",
        ),
        (f'slug = "{SEED}"', 'slug = "other"', f"{SEED}/exercise.toml: slug: the folder's name"),
        (
            "reference.multi_headed_self_attention",
            "reference.nowhere",
            f"{SEED}/exercise.toml: reference: an importable module (reference/nowhere.py",
        ),
        (
            'entry_point = "MultiHeadedSelfAttention"',
            'entry_point = "Missing"',
            "reference/multi_headed_self_attention.py: Missing: defined: the entry point",
        ),
    ],
)
def test_a_broken_folder_is_set_apart_with_one_line_per_fault(
    folder: Path, old: str, new: str, line: str
) -> None:
    shutil.copytree(EXERCISES / "scaled-dot-product-attention", folder / "fine")
    edit(folder / "fine", 'slug = "scaled-dot-product-attention"', 'slug = "fine"')
    edit(folder / SEED, old, new)
    catalog = Catalog.scan(folder)
    assert catalog.slugs() == ["fine"]
    [lines] = [error.lines() for error in catalog.problems.values()]
    assert len(lines) == 1 and lines[0].startswith(line), lines
    with pytest.raises(ExerciseDefinitionError) as raised:
        catalog.get(SEED)
    assert raised.value.lines() == lines
    with pytest.raises(ExerciseDefinitionError):
        Catalog.from_folder(folder)


def test_every_fault_of_a_folder_is_listed(folder: Path) -> None:
    edit(folder / SEED, "title =", "titel =")
    edit(folder / SEED, "summary =", "# summary =")
    (folder / SEED / "starter.py").unlink()
    error = Catalog.scan(folder).problems[SEED]
    assert [problem.field for problem in error.problems] == ["title", "summary", "titel"]
    edit(folder / SEED, "titel =", "title =")
    edit(folder / SEED, "# summary =", "summary =")
    [missing] = Catalog.scan(folder).problems[SEED].problems
    assert (missing.file, missing.field) == (f"{SEED}/starter.py", "-")


def test_the_version_is_a_hash_of_the_folder_and_its_reference(folder: Path) -> None:
    first = load_exercise(folder / SEED)
    assert first.version == load_exercise(folder / SEED).version
    assert first.version == load_exercise(EXERCISES / SEED).version  # where it lies is not it
    (folder / SEED / "__pycache__").mkdir()
    (folder / SEED / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (folder / SEED / ".statement.md.swp").write_bytes(b"editor")
    assert load_exercise(folder / SEED).version == first.version
    (folder / SEED / "statement.md").write_text("# Changed\n", encoding="utf-8")
    assert load_exercise(folder / SEED).version != first.version


def test_the_fingerprint_changes_with_any_file(folder: Path) -> None:
    before = catalog_fingerprint(folder)
    assert catalog_fingerprint(folder) == before
    (folder / SEED / "notes.txt").write_text("new", encoding="utf-8")
    assert catalog_fingerprint(folder) != before


def test_a_folder_that_breaks_keeps_its_last_good_version_served(folder: Path) -> None:
    good = Catalog.scan(folder)
    edit(folder / SEED, "title =", "titel =")
    served = Catalog.scan(folder).succeeding(good)
    assert served.get(SEED) == good.get(SEED)
    assert SEED in served.problems
    shutil.rmtree(folder / SEED)
    assert Catalog.scan(folder).succeeding(served).slugs() == []


def test_the_grader_serves_a_changed_exercise_with_a_plan_of_its_own(folder: Path) -> None:
    grader = Grader(Catalog.scan(folder), InProcessSandbox(), "secret")
    grader.warm()
    before = grader.plan(SEED)
    edit(folder / SEED, 'name = "batch 1, 2 heads"', 'name = "renamed"')
    catalog = grader.update(Catalog.scan(folder))
    after = grader.plan(SEED)
    assert after is not before and after.exercise == catalog.get(SEED)
    assert "renamed" in [test.spec.name for test in after.tests]
    assert grader.grade(SEED, "x = 1").exercise_version == catalog.get(SEED).version


def test_a_change_whose_plan_fails_keeps_the_last_good_version(folder: Path) -> None:
    """A reference that cannot build the exercise's tests (here: grader-drawn weights for a
    reference whose entry point is a function) fails the check the scan cannot make."""
    grader = Grader(Catalog.scan(folder), InProcessSandbox(), "secret")
    good = grader.warm().get(SEED)
    edit(
        folder / SEED,
        "reference.multi_headed_self_attention",
        "reference.scaled_dot_product_attention",
    )
    edit(
        folder / SEED,
        'entry_point = "MultiHeadedSelfAttention"',
        'entry_point = "scaled_dot_product"',
    )
    served = grader.update(Catalog.scan(folder))
    assert served.get(SEED) == good and SEED in served.problems
    assert grader.plan(SEED).exercise == good


SEED_REFERENCE = (Path(reference.__path__[0]) / "multi_headed_self_attention.py").read_text(
    encoding="utf-8"
)
OwnReference = Callable[[str], str]


@pytest.fixture
def own_reference(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OwnReference:
    """Make the seed copy's reference a module of the test's own, from its source; returns the
    path its problems name it by."""
    modules = tmp_path / "reference"
    modules.mkdir()
    monkeypatch.setattr(reference, "__path__", [*reference.__path__, str(modules)])

    def write(source: str) -> str:
        name = f"own_{tmp_path.name.replace('-', '_')}"
        (modules / f"{name}.py").write_text(source, encoding="utf-8")
        importlib.invalidate_caches()
        edit(folder / SEED, "reference.multi_headed_self_attention", f"reference.{name}")
        return f"reference/{name}.py"

    return write


def test_a_reference_that_does_not_parse_is_broken_with_its_line(
    folder: Path, own_reference: OwnReference
) -> None:
    path = own_reference(SEED_REFERENCE + "\ndef broken(:\n    pass\n")
    [line] = Catalog.scan(folder).problems[SEED].lines()
    assert line.startswith(f"{path}: -: valid Python (line {SEED_REFERENCE.count(chr(10)) + 2}: ")


RENAMED = SEED_REFERENCE.replace("class MultiHeadedSelfAttention(", "class Renamed(")


@pytest.mark.parametrize(
    ("source", "defined"),
    [
        (RENAMED, False),
        (RENAMED + "\ndef alias():\n    MultiHeadedSelfAttention = Renamed\n", False),
        (RENAMED + "\nMultiHeadedSelfAttention = Renamed\n", True),
        (
            RENAMED
            + "\ntry:\n    MultiHeadedSelfAttention = Renamed\nexcept NameError:\n    pass\n",
            True,
        ),
    ],
)
def test_the_entry_point_must_be_bound_at_the_top_level(
    folder: Path, own_reference: OwnReference, source: str, defined: bool
) -> None:
    path = own_reference(source)
    problems = Catalog.scan(folder).problems
    assert (SEED not in problems) == defined
    if not defined:
        assert problems[SEED].lines() == [
            f"{path}: MultiHeadedSelfAttention: defined: the entry point"
        ]


def test_a_reference_that_raises_at_import_is_listed_but_broken_once_planned(
    folder: Path,
    own_reference: OwnReference,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The scan does not run the reference; building the plan does, and sets the exercise
    apart with the line that raised. `check-exercise` says the same."""
    path = own_reference(SEED_REFERENCE + "\nraise RuntimeError('broken at import')\n")
    scanned = Catalog.scan(folder)
    assert scanned.slugs() == [SEED]
    line = SEED_REFERENCE.count("\n") + 2
    expected = (
        f"{path}: -: a module that imports cleanly (line {line}: RuntimeError: broken at import)"
    )
    grader = Grader(scanned, InProcessSandbox(), "secret")
    served = grader.warm()
    assert served.slugs() == [] and served.problems[SEED].lines() == [expected]
    with pytest.raises(ExerciseDefinitionError):
        grader.plan(SEED)

    monkeypatch.setattr(
        "grader.settings.get_settings", lambda: GraderSettings(exercises_dir=folder)
    )
    assert cli.main(["check-exercise", SEED]) == 1
    [problem] = [text for text in capsys.readouterr().out.splitlines() if "PROBLEM" in text]
    assert problem.endswith(f"{expected}: fix the reference")


def test_a_course_catalog_outside_the_project_has_its_references_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A course's own folder, mounted anywhere: `exercises/` and `reference/` side by side. Its
    reference is found, loaded and graded with (one reference importing the project's too),
    with no change to the project's `reference` package on disk."""
    monkeypatch.setattr(reference, "__path__", list(reference.__path__))  # undone after
    course = tmp_path / "course"
    slug, module = "course-attention", "course_attention_beside"
    shutil.copytree(EXERCISES / "scaled-dot-product-attention", course / "exercises" / slug)
    edit(course / "exercises" / slug, 'slug = "scaled-dot-product-attention"', f'slug = "{slug}"')
    edit(
        course / "exercises" / slug,
        '"reference.scaled_dot_product_attention"',
        f'"reference.{module}"',
    )
    (course / "reference").mkdir()
    (course / "reference" / f"{module}.py").write_text(
        "from reference.scaled_dot_product_attention import *  # noqa: F403\n"
        "from reference.scaled_dot_product_attention import VARIANTS, scaled_dot_product\n",
        encoding="utf-8",
    )
    assert importlib.util.find_spec(f"reference.{module}") is None

    catalog = Catalog.scan(course / "exercises")

    assert catalog.problems == {}
    exercise = catalog.get(slug)
    assert exercise.reference_file == course / "reference" / f"{module}.py"
    grader = Grader(catalog, InProcessSandbox(), "secret")
    solution = (course / "exercises" / slug / "solutions" / "notebook_style.py").read_text()
    report = grader.grade(slug, solution)
    assert report.score == report.max_score, report.message
