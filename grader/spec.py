"""The typed form of an exercise folder: `exercise.toml` validated into an `ExerciseSpec`.

An exercise says what to build (an entry point: a class or a function), how the grader calls it
(constructor arguments, inputs drawn from seeds, where the weights come from), which outputs it
compares, and what the submission may not use.
"""

from __future__ import annotations

import importlib.util
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails

from grader.errors import DefinitionProblem, ExerciseDefinitionError
from grader.limits import SandboxLimits
from grader.promises import Promise
from grader.proof_record import ProofRecord, read_proof_record
from grader.trainability_spec import TrainabilityCheck, TrainabilitySpec
from grader.versions import exercise_version


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Visibility(StrEnum):
    VISIBLE = "visible"
    HIDDEN = "hidden"


class EntryKind(StrEnum):
    MODULE = "module"  # an nn.Module class: constructed with `init`, then called on the inputs
    FUNCTION = "function"  # a plain function called on the inputs


class Framework(StrEnum):
    TORCH = "torch"  # inputs and outputs are torch.Tensor
    NUMPY = "numpy"  # inputs and outputs are numpy.ndarray


class Property(StrEnum):
    """What an exercise may ask of a submission whatever its numbers; how each is probed and
    judged is its entry in `grader.properties.PROPERTIES`."""

    CAUSAL = "causal"  # changing a later token must not change an earlier output
    BATCH_INDEPENDENT = "batch_independent"  # one sample must not change another's output


class WeightSource(StrEnum):
    # The submission's own constructor makes its weights (it seeds the global RNG itself, as the
    # starter does); the reference is built the same way.
    SUBMISSION = "submission"
    # The grader draws every parameter of the reference from the test's seed and loads them into
    # the submission by name, strictly: the statement fixes the parameter names.
    GRADER = "grader"


class RandomTensor(_Strict):
    """A tensor drawn from the test's dedicated generator."""

    shape: tuple[int, ...]
    dist: Literal["randn", "rand"] = "randn"
    dtype: Literal["float32", "float64"] = "float32"


class CausalMask(_Strict):
    """An additive mask of shape (size, size): 0 on and below the diagonal, -inf above."""

    causal_mask: int = Field(gt=0)
    dtype: Literal["float32", "float64"] = "float32"


class SameAs(_Strict):
    """The very tensor passed as an earlier argument (self-attention's query = key = value)."""

    same_as: int = Field(ge=0)


def _input_kind(value: object) -> str:
    """Which kind of input a table is, by its telling key, so a fault in it is reported for
    that kind alone (not once for each kind it fails to be)."""
    keys = value if isinstance(value, dict) else vars(value)
    if "causal_mask" in keys:
        return "mask"
    return "same" if "same_as" in keys else "tensor"


InputSpec = Annotated[
    Annotated[RandomTensor, Tag("tensor")]
    | Annotated[CausalMask, Tag("mask")]
    | Annotated[SameAs, Tag("same")],
    Discriminator(_input_kind),
]


class TestCaseSpec(_Strict):
    __test__ = False  # a domain type, not a pytest test class

    name: str = Field(min_length=1, max_length=80)
    visibility: Visibility = Visibility.VISIBLE
    points: float = Field(default=1.0, gt=0)
    # Visible tests carry their seed; hidden tests draw it from the deployment secret. A seed
    # keys the generator whole (grader.inputs), so it is a non-negative integer of any size.
    seed: int | None = Field(default=None, ge=0)
    init: dict[str, int | float | bool] = Field(default_factory=dict)
    inputs: list[InputSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_seed_and_references(self) -> TestCaseSpec:
        if self.visibility is Visibility.VISIBLE and self.seed is None:
            raise ValueError(f"visible test {self.name!r} needs a seed")
        if self.visibility is Visibility.HIDDEN and self.seed is not None:
            raise ValueError(f"hidden test {self.name!r} must not carry a seed")
        for position, spec in enumerate(self.inputs):
            if isinstance(spec, SameAs) and spec.same_as >= position:
                raise ValueError(f"test {self.name!r}: input {position} refers forward")
        return self


class LimitsSpec(_Strict):
    cpu_s: float = Field(default=10.0, gt=0, le=120)
    wall_s: float = Field(default=20.0, gt=0, le=300)
    memory_mb: int = Field(default=2048, ge=256, le=16384)

    def to_limits(self) -> SandboxLimits:
        return SandboxLimits(
            cpu_s=self.cpu_s, wall_s=self.wall_s, memory_bytes=self.memory_mb * 1024 * 1024
        )


class ExerciseSpec(_Strict):
    slug: Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    title: str
    summary: str
    kind: EntryKind
    framework: Framework = Framework.TORCH
    entry_point: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    # Dotted module path of the trusted reference, e.g. "reference.multi_headed_self_attention".
    reference: Annotated[str, Field(pattern=r"^reference\.[a-z0-9_]+$")]
    weights: WeightSource = WeightSource.SUBMISSION
    # Names of the outputs, in order; one name means a single returned value.
    outputs: list[str] = Field(default_factory=lambda: ["output"], min_length=1)
    # Libraries the submission may import, each with its computational submodules ("torch"
    # brings torch.nn, torch.nn.functional, torch.nn.init...); typing, torchtyping, __future__
    # and math are importable in every exercise (grader.sandbox.policy.modules).
    allowed_imports: list[str]
    # Dotted names the submission may not reach, e.g. "torch.nn.MultiheadAttention".
    forbidden: list[str] = Field(default_factory=list)
    properties: list[Property] = Field(default_factory=list)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    tests: list[TestCaseSpec] = Field(min_length=2)
    # The cases the statement promises to handle; a hidden test must exercise each.
    promises: list[Promise] = Field(default_factory=list)
    trainability: TrainabilitySpec = Field(default_factory=TrainabilitySpec)

    @model_validator(mode="after")
    def _check_tests(self) -> ExerciseSpec:
        names = [test.name for test in self.tests]
        if len(names) != len(set(names)):
            raise ValueError("test names must be unique")
        if self.kind is EntryKind.FUNCTION and self.weights is WeightSource.GRADER:
            raise ValueError("a function has no weights for the grader to load")
        if self.framework is Framework.NUMPY:
            self.trainability.check_numpy()
        return self

    @property
    def trainability_checks(self) -> tuple[TrainabilityCheck, ...]:
        """The checks in effect: none where they are off."""
        return self.trainability.in_effect(numpy=self.framework is Framework.NUMPY)

    @property
    def max_score(self) -> float:
        return sum(test.points for test in self.tests)

    def test(self, name: str) -> TestCaseSpec:
        for test in self.tests:
            if test.name == name:
                return test
        raise KeyError(name)


class Exercise(_Strict):
    """An exercise as found on disk: its spec, the texts shown to students, and its version (a
    hash of its folder and its reference module, `grader.versions`) and the record of its
    proof, if any: a draft until that names this version (`grader.proof_record`)."""

    spec: ExerciseSpec
    statement: str
    starter: str
    folder: Path
    reference_file: Path
    version: str
    proof: ProofRecord | None = None


def load_exercise(folder: Path) -> Exercise:
    """Read and validate one exercise folder; raise ExerciseDefinitionError listing every fault
    found (file, field, what is expected). The reference module is found, not imported
    (`grader.reference.Reference.load` proves it)."""
    spec = _read_spec(folder)
    problems: list[DefinitionProblem] = []
    statement = _read_text(folder, "statement.md", problems)
    starter = _read_text(folder, "starter.py", problems)
    reference_file = _reference_file(spec.reference)
    if spec.slug != folder.name:
        problems.append(_problem(folder, "slug", f"the folder's name, {folder.name!r}"))
    if reference_file is None:
        expected = f"an importable module ({module_path(spec.reference)} not found)"
        problems.append(_problem(folder, "reference", expected))
    if problems or reference_file is None:
        raise ExerciseDefinitionError(problems)
    return Exercise(
        spec=spec,
        statement=statement,
        starter=starter,
        folder=folder,
        reference_file=reference_file,
        version=exercise_version(folder, reference_file),
        proof=read_proof_record(folder),
    )


def module_path(module: str) -> str:
    """How a problem names a reference module's file: `reference/tiny.py`."""
    return module.replace(".", "/") + ".py"


def _read_spec(folder: Path) -> ExerciseSpec:
    path = folder / "exercise.toml"
    try:
        return ExerciseSpec.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError) as error:
        raise ExerciseDefinitionError([_unreadable(folder, path.name, error)]) from None
    except tomllib.TOMLDecodeError as error:
        raise ExerciseDefinitionError([_problem(folder, "-", f"TOML ({error})")]) from None
    except ValidationError as error:
        raise ExerciseDefinitionError(
            validation_problems(error, f"{folder.name}/exercise.toml")
        ) from None


def validation_problems(error: ValidationError, file: str) -> list[DefinitionProblem]:
    """One problem per value pydantic refused in `file`."""
    return [
        DefinitionProblem(file, _field(item["loc"]), _expected(item)) for item in error.errors()
    ]


def _read_text(folder: Path, name: str, problems: list[DefinitionProblem]) -> str:
    """The file's text; "" and a problem added when it cannot be read."""
    try:
        return (folder / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(_unreadable(folder, name, error))
        return ""


def _reference_file(module: str) -> Path | None:
    try:
        found = importlib.util.find_spec(module)
    except ImportError:  # no `reference` package at all
        return None
    return Path(found.origin) if found is not None and found.origin else None


def _problem(
    folder: Path, field: str, expected: str, file: str = "exercise.toml"
) -> DefinitionProblem:
    return DefinitionProblem(f"{folder.name}/{file}", field, expected)


def _unreadable(folder: Path, name: str, error: OSError | UnicodeDecodeError) -> DefinitionProblem:
    reason = error.strerror if isinstance(error, OSError) else "not UTF-8"
    return _problem(folder, "-", f"a readable UTF-8 file ({reason})", file=name)


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "-"


def _expected(item: ErrorDetails) -> str:
    if item["type"] == "extra_forbidden":
        return "no such field (a typo?)"
    return item["msg"].removeprefix("Value error, ")
