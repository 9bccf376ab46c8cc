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
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from grader.contract import FORWARD
from grader.errors import DefinitionProblem, ExerciseDefinitionError
from grader.input_specs import InputSpec, check_references
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


class Mode(StrEnum):
    EVAL = "eval"
    # module.train(), the global RNG seeded just before each call: dropout draws the same masks
    # in the reference and in code that draws them at the same places (grader.call_execution).
    TRAIN = "train"


_IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"


class StepSpec(_Strict):
    """One call of a sequence on one instance: a method and its inputs."""

    method: Annotated[str, Field(pattern=_IDENTIFIER)] = FORWARD
    inputs: list[InputSpec] = Field(default_factory=list)


class TestCaseSpec(_Strict):
    __test__ = False  # a domain type, not a pytest test class

    name: str = Field(min_length=1, max_length=80)
    visibility: Visibility = Visibility.VISIBLE
    points: float = Field(default=1.0, gt=0)
    # Visible tests carry their seed; hidden tests draw it from the deployment secret. A seed
    # keys the generator whole (grader.inputs), so it is a non-negative integer of any size.
    seed: int | None = Field(default=None, ge=0)
    init: dict[str, int | float | bool] = Field(default_factory=dict)
    # One call on `inputs`, or `steps`: several calls on one instance, each output compared.
    inputs: list[InputSpec] = Field(default_factory=list)
    steps: list[StepSpec] = Field(default_factory=list)
    mode: Mode = Mode.EVAL
    # This test's tolerance in decimals: 4, the product's promise, unless it says otherwise.
    decimals: int | None = Field(default=None, ge=1, le=8)
    # Another entry point of the exercise (`ExerciseSpec.entries`); None: the main one.
    entry: str | None = None

    @model_validator(mode="after")
    def _check_seed_and_references(self) -> TestCaseSpec:
        if self.visibility is Visibility.VISIBLE and self.seed is None:
            raise ValueError(f"visible test {self.name!r} needs a seed")
        if self.visibility is Visibility.HIDDEN and self.seed is not None:
            raise ValueError(f"hidden test {self.name!r} must not carry a seed")
        if bool(self.inputs) == bool(self.steps):
            raise ValueError(f"test {self.name!r} needs `inputs` or `steps`, one of them")
        check_references(self.inputs, f"test {self.name!r}")
        for number, step in enumerate(self.steps, start=1):
            check_references(step.inputs, f"test {self.name!r}, step {number}")
        return self

    @property
    def calls(self) -> tuple[StepSpec, ...]:
        """What the test calls, in order: its steps, or its one call of the entry itself."""
        return tuple(self.steps) or (StepSpec(inputs=self.inputs),)


class EntrySpec(_Strict):
    """Another entry point the statement asks for, in the same file (a function beside the
    module, say): its kind and the names of what it returns."""

    kind: EntryKind
    outputs: list[str] = Field(default_factory=lambda: ["output"], min_length=1)


class MethodSpec(_Strict):
    """A method that steps call on the instance, and the names of what it returns (none: its
    return value is not compared)."""

    outputs: list[str] = Field(default_factory=list)
    # Run with gradients on: a training step calls backward.
    grad: bool = False


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
    # math and collections are importable in every exercise (grader.sandbox.policy.modules).
    allowed_imports: list[str]
    # Dotted names the submission may not reach, e.g. "torch.nn.MultiheadAttention".
    forbidden: list[str] = Field(default_factory=list)
    properties: list[Property] = Field(default_factory=list)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    tests: list[TestCaseSpec] = Field(min_length=2)
    # The cases the statement promises to handle; a hidden test must exercise each.
    promises: list[Promise] = Field(default_factory=list)
    trainability: TrainabilitySpec = Field(default_factory=TrainabilitySpec)
    # Tolerance in decimals per output name, where 4 is too strict for a correct float32 program.
    decimals: dict[str, Annotated[int, Field(ge=1, le=8)]] = Field(default_factory=dict)
    entries: dict[str, EntrySpec] = Field(default_factory=dict)
    methods: dict[str, MethodSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_tests(self) -> ExerciseSpec:
        names = [test.name for test in self.tests]
        if len(names) != len(set(names)):
            raise ValueError("test names must be unique")
        for test in self.tests:
            self._check_calls(test)
        unknown = set(self.decimals) - self._output_names()
        if unknown:
            raise ValueError(f"`decimals` names no output {sorted(unknown)[0]!r}")
        if self.kind is EntryKind.FUNCTION and self.weights is WeightSource.GRADER:
            raise ValueError("a function has no weights for the grader to load")
        if self.framework is Framework.NUMPY:
            self.trainability.check_numpy()
        return self

    def _check_calls(self, test: TestCaseSpec) -> None:
        if test.entry is not None and test.entry not in self.entries:
            raise ValueError(f"test {test.name!r}: no entry {test.entry!r} in [entries]")
        for step in test.steps:
            if step.method != FORWARD and step.method not in self.methods:
                raise ValueError(f"test {test.name!r}: no method {step.method!r} in [methods]")
            if step.method != FORWARD and self.entry_kind(test) is EntryKind.FUNCTION:
                raise ValueError(f"test {test.name!r}: a function has no method {step.method!r}")
        methods = [step.method for step in test.steps]
        if methods and all(m != FORWARD and not self.methods[m].outputs for m in methods):
            raise ValueError(f"test {test.name!r}: none of its steps returns an output")

    def _output_names(self) -> set[str]:
        every = [self.outputs, *(entry.outputs for entry in self.entries.values())]
        every += [method.outputs for method in self.methods.values()]
        return {name for names in every for name in names}

    def entry_kind(self, test: TestCaseSpec) -> EntryKind:
        return self.kind if test.entry is None else self.entries[test.entry].kind

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
