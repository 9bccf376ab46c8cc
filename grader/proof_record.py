"""The record a holding proof leaves in its exercise's folder, `proof.toml`, and what it decides:
an exercise is *published* (students see it) while its record names its current version, and
a *draft* (staff alone see it) otherwise: a new skeleton, any edit since the last proof, a proof
that failed (`autograder check-exercise` removes the record then, so an exercise that no longer
holds, at an unchanged version but under a changed grader, is not shown as proven).

The record is left out of the exercise's version (`grader.versions.exercise_version`), so
writing it does not change what it certifies; it stays in the catalog's fingerprint, so a
running service sees a new proof and publishes the exercise without a restart.
"""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grader.versions import PROOF_RECORD

if TYPE_CHECKING:
    from grader.spec import Exercise


class ProofRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(min_length=1)  # the exercise version the proof held for
    proved_at: datetime
    solutions: int = Field(ge=0)  # how many solutions and mistakes it graded
    mistakes: int = Field(ge=0)

    @classmethod
    def now(cls, version: str, *, solutions: int, mistakes: int) -> ProofRecord:
        proved_at = datetime.now(UTC).replace(microsecond=0)
        return cls(version=version, proved_at=proved_at, solutions=solutions, mistakes=mistakes)


def read_proof_record(folder: Path) -> ProofRecord | None:
    """The folder's record; None where there is none, or none that reads as one (a draft)."""
    try:
        text = (folder / PROOF_RECORD).read_text(encoding="utf-8")
        return ProofRecord.model_validate(tomllib.loads(text))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError):
        return None


def write_proof_record(folder: Path, record: ProofRecord) -> Path:
    path = folder / PROOF_RECORD
    path.write_text(
        "# Written by `autograder check-exercise`: the version of this exercise its proof held\n"
        "# for. Students see the exercise while this names its current version.\n"
        f'version = "{record.version}"\n'
        f"proved_at = {record.proved_at.isoformat()}\n"
        f"solutions = {record.solutions}\n"
        f"mistakes = {record.mistakes}\n",
        encoding="utf-8",
    )
    return path


def remove_proof_record(folder: Path) -> bool:
    """Remove the folder's record; whether there was one."""
    try:
        (folder / PROOF_RECORD).unlink()
    except FileNotFoundError:
        return False
    return True


def draft_reason(exercise: Exercise) -> str | None:
    """Why students may not see the exercise yet, with what publishes it; None once proven."""
    record, slug = exercise.proof, exercise.spec.slug
    if record is not None and record.version == exercise.version:
        return None
    publish = f"run `autograder check-exercise {slug}`"
    if record is None:
        return f"not proven: {publish}"
    return (
        f"changed since its proof of {record.proved_at:%Y-%m-%d %H:%M} UTC (version "
        f"{record.version}, now {exercise.version}): {publish}"
    )
