"""The contract between the grader and any sandbox: what crosses into it (a `Job`) and what
comes back (an `Execution`).

A job is the submission's source plus a list of calls, each fully described by data: constructor
arguments, parameters to load, input arrays. The sandbox runs them and returns arrays, errors and
prints. It never receives an expected output, a hidden seed or a reference, and everything it
returns is untrusted data that the runner validates and compares in its own process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from grader.limits import SandboxLimits

Scalar = int | float | bool


@dataclass(frozen=True)
class Policy:
    """What the static layer admits: the RestrictedPython policy's per-exercise inputs."""

    allowed_imports: tuple[str, ...]
    forbidden: tuple[str, ...] = ()


# The largest gradient a gradient pass sends back, per tensor: a call's outputs are bounded by
# `Call.max_output_elements` (the reference's size), a parameter's gradient by this.
MAX_GRADIENT_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class Backprop:
    """A call's gradient pass (`grader.backprop`): the same forward with gradients on, then a
    backward pass of `cotangents` (one per output, the reference's shapes) and one SGD step."""

    cotangents: tuple[np.ndarray, ...]
    learning_rate: float
    # The arguments whose gradients are compared (the drawn tensors: never a mask, whose
    # gradient depends on how the code applies it, not on whether it trains).
    wrt: tuple[int, ...] = ()


# A step's method that calls the entry itself: a module's forward, or the function.
FORWARD = "forward"

# An argument: an array (a tensor, in the entry's framework), a Python scalar, or None.
Arg = np.ndarray | Scalar | None
# The arguments of one call.
Inputs = tuple[Arg, ...]


@dataclass(frozen=True)
class Step:
    """One call of a sequence on one instance: `method` ("forward": the instance itself, or the
    function) on `args`; its results, by name, are `outputs`."""

    method: str
    args: Inputs
    outputs: tuple[str, ...]
    grad: bool = False  # gradients on (a training step calls backward)


@dataclass(frozen=True)
class Call:
    """One invocation of the submission's entry point, or a sequence of them on one instance.

    For a module: seed the global RNG with `seed` (if given), construct the class with
    `init_kwargs`, load `parameters`, switch to eval (or `train`) mode, then call it on `args`
    without grad, or with `backprop` its gradient pass; or, with `steps`, make each step's call
    in turn. For a function: call it on `args`, or make each step's call.
    """

    id: str
    args: Inputs
    init_kwargs: dict[str, Scalar] = field(default_factory=dict)
    seed: int | None = None
    # Parameter values to load after construction, by name. With `strict_parameters` the names
    # must be exactly the module's parameters; without, a name matches every parameter whose
    # dotted name ends with it and whose shape agrees (used for diagnosis probes).
    parameters: dict[str, np.ndarray] = field(default_factory=dict)
    strict_parameters: bool = True
    # Outputs larger than this many elements are reported by shape only, never materialised.
    max_output_elements: int = 1 << 22
    backprop: Backprop | None = None
    # Another entry point of the job's source, and its kind; None: the job's own.
    entry_point: str | None = None
    kind: str | None = None
    # The names of what the call on `args` returns; None: the job's outputs.
    outputs: tuple[str, ...] | None = None
    # Several calls on one instance, instead of the one on `args`.
    steps: tuple[Step, ...] = ()
    train: bool = False

    def entry_of(self, job: Job) -> str:
        """The entry point the call runs: its own, else the job's."""
        return self.entry_point or job.entry_point

    def kind_of(self, job: Job) -> str:
        return self.kind or job.kind

    def outputs_of(self, job: Job) -> tuple[str, ...]:
        """The names of what the call on `args` returns: its own, else the job's."""
        return job.outputs if self.outputs is None else self.outputs

    def output_count(self, job: Job) -> int:
        """How many values the call's outputs are, every step's together."""
        if self.steps:
            return sum(len(step.outputs) for step in self.steps)
        return len(self.outputs_of(job))


@dataclass(frozen=True)
class Job:
    source: str
    entry_point: str
    kind: str  # "module" | "function" (grader.spec.EntryKind)
    framework: str  # "torch" | "numpy" (grader.spec.Framework)
    policy: Policy
    calls: tuple[Call, ...]
    limits: SandboxLimits
    # The names of what the entry returns: with more than one, a tuple or list in this order,
    # or a dict by these names.
    outputs: tuple[str, ...] = ("output",)


class Termination(StrEnum):
    """How the run ended, as seen by the supervisor (never as claimed by the child)."""

    COMPLETED = "completed"  # every call ran (each may still have raised)
    REJECTED = "rejected"  # the static layer refused the source; nothing ran
    VIOLATION = "violation"  # a runtime guard caught a forbidden access; the run was ended
    TIMEOUT = "timeout"  # wall-clock deadline or CPU limit
    MEMORY = "memory"  # the memory limit
    OUTPUT_LIMIT = "output_limit"  # the result channel's byte cap
    CRASHED = "crashed"  # died otherwise: a signal, an exit, a broken channel


@dataclass(frozen=True)
class Violation:
    """A refusal by the static layer or a runtime guard, in the student's terms."""

    message: str
    line: int | None = None


@dataclass(frozen=True)
class OutputValue:
    """One returned value: an array when it was a tensor (or ndarray) of bounded size, else a
    description of what it was ("list of 2 Tensor", "Tensor of 10^9 elements", "NoneType")."""

    type_name: str
    array: np.ndarray | None = None
    dtype: str | None = None  # the tensor's own dtype, e.g. "torch.float32" or "float64"
    shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class RaisedError:
    type_name: str
    message: str
    line: int | None = None  # line in the submission where it was raised, if there
    # The grader's own finding that the submission does not fit the exercise (a constructor
    # that makes no module, parameters named otherwise), not an exception of the student's code.
    contract: bool = False


# How a contract error names parameters laid out otherwise than the statement's (the grader
# loads its weights by name): what the trusted side recognises them by.
MISSING_PARAMETERS = "missing parameters"
UNEXPECTED_PARAMETERS = "unexpected parameters"
SHAPE_ASKED = "the statement asks for"


@dataclass(frozen=True)
class ParameterGradient:
    """One registered parameter of a module, after the backward pass."""

    name: str
    shape: tuple[int, ...]
    trainable: bool  # requires_grad
    gradient: np.ndarray | None  # None where the output does not reach it


@dataclass(frozen=True)
class Gradients:
    """What a gradient pass found: whether the output carries an autograd graph, the gradient
    of each argument (None for one that is not a floating tensor, or that the output does not
    reach), each parameter's, and the outputs after one SGD step on `module.parameters()`."""

    graph: bool
    inputs: tuple[np.ndarray | None, ...]
    parameters: tuple[ParameterGradient, ...] = ()
    stepped: tuple[OutputValue, ...] = ()


@dataclass(frozen=True)
class CallOutcome:
    call_id: str
    outputs: tuple[OutputValue, ...] | None  # None when the call raised
    error: RaisedError | None = None
    stdout: str = ""
    duration_s: float = 0.0
    gradients: Gradients | None = None  # a gradient pass's findings (Call.backprop)


@dataclass(frozen=True)
class Execution:
    termination: Termination
    outcomes: dict[str, CallOutcome]
    # The call that was running when the run ended early (timeout, crash, violation).
    interrupted_call: str | None = None
    violations: tuple[Violation, ...] = ()
    detail: str = ""  # a human sentence about the termination, e.g. "killed by SIGSEGV"
    # Stopped because the machine gave it no CPU, not by its code: it waited for one until the
    # ceiling of its wall limit (supervision.Deadline). The platform's problem: run it again.
    starved: bool = False
