"""The trusted reference of an exercise, run in the grader's own process, never in a sandbox."""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import torch

from grader.call_execution import run_call
from grader.contract import Call, Job, OutputValue, Scalar
from grader.errors import ExerciseDefinitionError, ReferenceFailure
from grader.inputs import draw_parameters
from grader.spec import ExerciseSpec
from grader.variants import WeightProbe, WrongVariant

# References seed the global RNG in their constructors (exercise 1 does, as its statement asks),
# and the global RNG is process-wide: two threads building references at once would interleave
# their draws and get each other's weights.
_GLOBAL_RNG = threading.Lock()


@dataclass(frozen=True)
class Reference:
    entry: object
    variants: tuple[WrongVariant, ...]
    weight_probe: WeightProbe | None

    @classmethod
    def load(cls, spec: ExerciseSpec) -> Reference:
        module = _import(spec.reference)
        entry = getattr(module, spec.entry_point, None)
        if entry is None:
            raise ExerciseDefinitionError(f"{spec.reference} defines no {spec.entry_point}")
        return cls(
            entry=entry,
            variants=tuple(getattr(module, "VARIANTS", ())),
            weight_probe=getattr(module, "WEIGHT_PROBE", None),
        )

    def run(self, call: Call, job: Job) -> tuple[OutputValue, ...]:
        return run_trusted(self.entry, call, job)

    def probe_parameters(self, init: dict[str, Scalar]) -> dict[str, np.ndarray]:
        """The weight probe's parameters for a test's constructor arguments."""
        if self.weight_probe is None:
            return {}
        with _GLOBAL_RNG:
            return self.weight_probe.parameters(init)

    def draw_parameters(self, init: dict[str, Scalar], seed: int) -> dict[str, np.ndarray]:
        """Seeded values for every parameter of the reference built with `init`, for the grader
        to load into the submission."""
        with _GLOBAL_RNG:
            module = self.entry(**init)  # type: ignore[operator]
        if not isinstance(module, torch.nn.Module):
            raise ExerciseDefinitionError("grader-drawn weights need an nn.Module reference")
        return draw_parameters(module, seed)


def run_trusted(entry: object, call: Call, job: Job) -> tuple[OutputValue, ...]:
    """Run a trusted entry (the reference or one of its variants) on a call."""
    with _GLOBAL_RNG:
        try:
            return run_call(entry, call, job)
        except Exception as error:
            raise ReferenceFailure(f"{job.entry_point} reference failed on {call.id}") from error


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ExerciseDefinitionError(f"cannot import reference {name}: {error}") from error
