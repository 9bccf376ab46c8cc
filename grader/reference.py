"""The trusted reference of an exercise, run in the grader's own process, never in a sandbox."""

from __future__ import annotations

import importlib.util
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import torch

from grader.call_execution import run_call
from grader.contract import Call, Gradients, Job, OutputValue, Scalar
from grader.errors import DefinitionProblem, ExerciseDefinitionError, ReferenceFailure
from grader.inputs import draw_parameters
from grader.proof_files import mistake_declarations
from grader.spec import EntryKind, Exercise, module_path
from grader.variants import WeightProbe, WrongVariant

# References seed the global RNG in their constructors (exercise 1 does, as its statement asks),
# and the global RNG is process-wide: two threads building references at once would interleave
# their draws and get each other's weights. Whatever else runs such code in this process holds it
# too (the tests' in-process sandbox runs submissions here).
GLOBAL_RNG = threading.Lock()


@dataclass(frozen=True)
class Reference:
    module: str  # its dotted name, as exercise.toml gives it
    entry: object  # the exercise's entry point
    entries: dict[str, object]  # every entry point by name, the main one included
    variants: tuple[WrongVariant, ...]
    weight_probe: WeightProbe | None

    @classmethod
    def load(cls, exercise: Exercise) -> Reference:
        """The reference as its file reads now (never an earlier import of it, so a changed
        reference is graded with as soon as it is loaded again); raises ExerciseDefinitionError
        when it does not import or lacks the entry point."""
        spec = exercise.spec
        module = _execute(spec.reference, exercise.reference_file)
        entries = {name: getattr(module, name, None) for name in (spec.entry_point, *spec.entries)}
        for name, entry in entries.items():
            if entry is None:
                raise _definition_error(spec.reference, name, "defined: the entry point")
        return cls(
            module=spec.reference,
            entry=entries[spec.entry_point],
            entries=entries,
            variants=(*getattr(module, "VARIANTS", ()), *_exported_variants(exercise)),
            # Only a module has weights to load by name: a function's probe would mean nothing.
            weight_probe=(
                getattr(module, "WEIGHT_PROBE", None) if spec.kind is EntryKind.MODULE else None
            ),
        )

    def run(self, call: Call, job: Job) -> tuple[OutputValue, ...]:
        return run_trusted(self.entries[call.entry_of(job)], call, job)[0]

    def backprop(self, call: Call, job: Job) -> Gradients:
        """The reference's gradient pass on a call that carries one (`Call.backprop`)."""
        gradients = run_trusted(self.entry, call, job)[1]
        assert gradients is not None, "a call without a gradient pass"
        return gradients

    def probe_parameters(self, init: dict[str, Scalar]) -> dict[str, np.ndarray]:
        """The weight probe's parameters for a test's constructor arguments."""
        if self.weight_probe is None:
            return {}
        with GLOBAL_RNG:
            return self.weight_probe.parameters(init)

    def draw_parameters(self, init: dict[str, Scalar], seed: int) -> dict[str, np.ndarray]:
        """Seeded values for every parameter of the reference built with `init`, for the grader
        to load into the submission."""
        with GLOBAL_RNG:
            module = self.entry(**init)  # type: ignore[operator]
        if not isinstance(module, torch.nn.Module):
            raise _definition_error(
                self.module, "weights", "an nn.Module reference for grader-drawn weights"
            )
        return draw_parameters(module, seed)


def _exported_variants(exercise: Exercise) -> list[WrongVariant]:
    """The files of the exercise's `mistakes/` declared as variants (`grader.proof_files`): each
    one's entry point, loaded as the reference is, trusted as the folder it came with."""
    spec, found = exercise.spec, []
    for name, declared in mistake_declarations(exercise.folder).items():
        if declared.variant is None:
            continue
        where = f"mistakes.{name}"
        if not isinstance(declared.diagnosis, str):
            raise _definition_error(where, "diagnosis", "the one code of the variant it declares")
        entry = getattr(
            _execute(where, exercise.folder / "mistakes" / f"{name}.py"), spec.entry_point, None
        )
        if entry is None:
            raise _definition_error(where, spec.entry_point, "defined: the entry point")
        variant = declared.variant
        found.append(
            WrongVariant(declared.diagnosis, variant.message, entry, concepts=variant.concepts)
        )
    return found


def run_trusted(
    entry: object, call: Call, job: Job
) -> tuple[tuple[OutputValue, ...], Gradients | None]:
    """Run a trusted entry (the reference or one of its variants) on a call."""
    with GLOBAL_RNG:
        try:
            return run_call(entry, call, job)
        except Exception as error:
            raise ReferenceFailure(f"{job.entry_point} reference failed on {call.id}") from error


def _execute(name: str, path: Path) -> ModuleType:
    """A new module object from the file: not registered in sys.modules, so no later import
    finds it (a reference's own imports of other modules are theirs, cached as usual)."""
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise _definition_error(name, "-", "a Python module")
    module = importlib.util.module_from_spec(found)
    try:
        found.loader.exec_module(module)
    except Exception as error:  # whatever the module raises at import, it is broken
        where = _line_in(path, error)
        raise _definition_error(
            name, "-", f"a module that imports cleanly ({where}{type(error).__name__}: {error})"
        ) from error
    return module


def _line_in(path: Path, error: BaseException) -> str:
    """ "line N: ", the last line of the module's own file the error went through (a
    SyntaxError's, for one the file's own), or nothing."""
    if isinstance(error, SyntaxError) and error.filename == str(path):
        return f"line {error.lineno}: "
    lines = [
        line
        for frame, line in traceback.walk_tb(error.__traceback__)
        if frame.f_code.co_filename == str(path)
    ]
    return f"line {lines[-1]}: " if lines else ""


def _definition_error(module: str, field: str, expected: str) -> ExerciseDefinitionError:
    return ExerciseDefinitionError([DefinitionProblem(module_path(module), field, expected)])
