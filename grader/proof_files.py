"""An exercise's proof on disk: `solutions/` (correct files) and `mistakes/` (known-wrong files).

Each mistake is a whole student file, `mistakes/<name>.py`, declared in `mistakes/mistakes.toml`
under its name with what it gets wrong and the one diagnosis it must get, if any:

    [missing_scaling]
    description = "divides the scores by nothing: no 1/sqrt(d)"
    diagnosis = "missing-scaling"      # a code of the reference's VARIANTS, or weights-differ

    [float_head_size]
    description = "head size attention_dim / num_heads, a float: nn.Linear raises"
    # no diagnosis: it must fail, and get none

    [heads_reversed]
    description = "the heads concatenated last to first"
    diagnosis = "heads-reversed"
    variant = { message = "Your heads come out last to first", concepts = ["head-split-merge"] }
    # the file is itself a known-wrong variant (as staff export a group they named): the
    # reference adds its entry point to its variants, with this message (`grader.reference`)

The declarations are validated like the spec: a malformed mistakes.toml is an invalid exercise
folder (ExerciseDefinitionError); a file without a declaration, or a declaration without a file,
is a problem for `autograder check-exercise` to report (`ProofFiles.undeclared`, `.orphans`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, model_validator

from grader.concepts import CONCEPTS
from grader.errors import DefinitionProblem, ExerciseDefinitionError
from grader.spec import validation_problems

MISTAKES_FILE = "mistakes.toml"
DiagnosisCode = Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]


class ExportedVariant(BaseModel):
    """A mistake file that is itself a known-wrong variant: what a student who makes it is told,
    and the concepts the mistake is about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message: str = Field(min_length=1, max_length=600)
    concepts: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _known_concepts(self) -> ExportedVariant:
        unknown = [concept for concept in self.concepts if concept not in CONCEPTS]
        if unknown:
            raise ValueError(f"unknown concepts {unknown}: use those of grader.concepts")
        return self


class MistakeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # The file is itself a known-wrong variant, of the code `diagnosis` (`grader.reference`).
    variant: ExportedVariant | None = None
    description: str = Field(min_length=1, max_length=160)
    diagnosis: DiagnosisCode | None = None


class MistakeDeclarations(RootModel[dict[str, MistakeSpec]]):
    pass


@dataclass(frozen=True)
class ProofFile:
    path: Path
    source: str

    @property
    def name(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class Mistake(ProofFile):
    spec: MistakeSpec


@dataclass(frozen=True)
class ProofFiles:
    solutions: tuple[ProofFile, ...]
    mistakes: tuple[Mistake, ...]
    undeclared: tuple[Path, ...]  # mistake files that mistakes.toml does not name
    orphans: tuple[str, ...]  # names declared in mistakes.toml with no file


def load_proof_files(folder: Path) -> ProofFiles:
    """Read an exercise folder's solutions and mistakes; raise ExerciseDefinitionError when
    mistakes.toml or a file can't be read or doesn't validate."""
    declarations = mistake_declarations(folder)
    mistake_paths = _python_files(folder / "mistakes")
    names = {path.stem for path in mistake_paths}
    return ProofFiles(
        solutions=tuple(
            ProofFile(path, _read(path)) for path in _python_files(folder / "solutions")
        ),
        mistakes=tuple(
            Mistake(path, _read(path), declarations[path.stem])
            for path in mistake_paths
            if path.stem in declarations
        ),
        undeclared=tuple(path for path in mistake_paths if path.stem not in declarations),
        orphans=tuple(sorted(set(declarations) - names)),
    )


def mistake_declarations(folder: Path) -> dict[str, MistakeSpec]:
    """An exercise folder's `mistakes/mistakes.toml`, by name; raise ExerciseDefinitionError
    where it can't be read or doesn't validate."""
    path = folder / "mistakes" / MISTAKES_FILE
    if not path.exists():
        return {}
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        return MistakeDeclarations.model_validate(raw).root
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ExerciseDefinitionError([_unreadable(path, error)]) from None
    except ValidationError as error:  # one line per entry and field: [name].field
        raise ExerciseDefinitionError(validation_problems(error, _shown(path))) from None


def _python_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.py"))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ExerciseDefinitionError([_unreadable(path, error)]) from None


def _shown(path: Path) -> str:
    """A proof file as a problem names it: from its exercise's folder on."""
    return str(path.relative_to(path.parents[2]))


def _unreadable(path: Path, error: Exception) -> DefinitionProblem:
    return DefinitionProblem(_shown(path), "-", f"a readable UTF-8 TOML or Python file ({error})")
