"""The proof record (`grader.proof_record`): an exercise is published while its proof.toml names
its version, and a draft, unknown to the catalog's published part, otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.catalog import Catalog, catalog_fingerprint
from grader.errors import UnknownExerciseError
from grader.proof_record import ProofRecord, read_proof_record, write_proof_record
from grader.settings import GraderSettings
from grader.spec import load_exercise

EXERCISES = GraderSettings().exercises_dir
SEED = "multi-headed-self-attention"
OTHER = "scaled-dot-product-attention"
TO_PUBLISH = f"run `autograder check-exercise {SEED}`"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An exercises folder holding copies of two exercises, proof records included."""
    for slug in (SEED, OTHER):
        shutil.copytree(EXERCISES / slug, tmp_path / slug)
    return tmp_path


def published(folder: Path) -> list[str]:
    return Catalog.scan(folder).published.slugs()


def test_a_copy_with_its_record_is_published(folder: Path) -> None:
    assert published(folder) == [SEED, OTHER]
    assert Catalog.scan(folder).drafts() == {}


def test_without_a_record_an_exercise_is_a_draft_unknown_to_students(folder: Path) -> None:
    (folder / SEED / "proof.toml").unlink()
    catalog = Catalog.scan(folder)
    assert catalog.slugs() == [SEED, OTHER]  # staff see it
    assert catalog.drafts() == {SEED: f"not proven: {TO_PUBLISH}"}
    assert catalog.published.slugs() == [OTHER]
    with pytest.raises(UnknownExerciseError) as raised:
        catalog.published.get(SEED)
    assert raised.value.known == [OTHER]  # the draft is not named to whoever asked


def test_an_edit_makes_a_draft_until_proven_again(folder: Path) -> None:
    record = read_proof_record(folder / SEED)
    assert record is not None
    statement = folder / SEED / "statement.md"
    statement.write_text(statement.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    edited = load_exercise(folder / SEED)
    assert Catalog.scan(folder).drafts() == {
        SEED: f"changed since its proof of {record.proved_at:%Y-%m-%d %H:%M} UTC (version "
        f"{record.version}, now {edited.version}): {TO_PUBLISH}"
    }
    write_proof_record(folder / SEED, ProofRecord.now(edited.version, solutions=4, mistakes=4))
    assert published(folder) == [SEED, OTHER]


def test_the_record_is_no_part_of_the_version_but_of_the_fingerprint(folder: Path) -> None:
    """Writing it changes nothing it certifies, and a running service sees it."""
    version, fingerprint = load_exercise(folder / SEED).version, catalog_fingerprint(folder)
    (folder / SEED / "proof.toml").unlink()
    assert load_exercise(folder / SEED).version == version
    assert catalog_fingerprint(folder) != fingerprint


@pytest.mark.parametrize(
    "text", ['version = "', 'version = ""\n', "versions = 1\n", "\xff", 'version = "x"\n']
)
def test_a_record_that_does_not_read_as_one_is_no_proof(folder: Path, text: str) -> None:
    (folder / SEED / "proof.toml").write_text(text, encoding="latin-1")
    assert published(folder) == [OTHER]


def test_a_broken_folder_served_at_no_proven_version_is_unknown_to_students(
    folder: Path,
) -> None:
    """Its version can't be known, so it may be a skeleton being typed."""
    toml = folder / SEED / "exercise.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("title =", "titel =", 1))
    catalog = Catalog.scan(folder)
    assert SEED in catalog.problems
    assert SEED not in catalog.published.problems
    with pytest.raises(UnknownExerciseError):
        catalog.published.get(SEED)


def test_a_published_exercise_that_breaks_stays_published_at_its_proven_version(
    folder: Path,
) -> None:
    good = Catalog.scan(folder)
    toml = folder / SEED / "exercise.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("title =", "titel =", 1))
    served = Catalog.scan(folder).succeeding(good)
    assert served.published.get(SEED) == good.get(SEED)
