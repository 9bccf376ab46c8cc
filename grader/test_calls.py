"""How a test calls the submission, read from its spec: which entry point, which steps, and the
name and tolerance of every output compared; and its call on a set of inputs."""

from __future__ import annotations

import numpy as np

from grader.compare import DECIMALS
from grader.contract import FORWARD, Call, Inputs, Step
from grader.plan import CONSTRUCTION_SEED
from grader.spec import ExerciseSpec, Mode, StepSpec, TestCaseSpec


def entry_point(spec: ExerciseSpec, test: TestCaseSpec) -> str:
    return test.entry or spec.entry_point


def step_outputs(spec: ExerciseSpec, test: TestCaseSpec, step: StepSpec) -> tuple[str, ...]:
    """What one call returns, by name: the entry's outputs, or the method's."""
    if step.method != FORWARD:
        return tuple(spec.methods[step.method].outputs)
    if test.entry is not None:
        return tuple(spec.entries[test.entry].outputs)
    return tuple(spec.outputs)


def output_names(spec: ExerciseSpec, test: TestCaseSpec) -> tuple[str, ...]:
    """The names of every output the test compares, in order: a sequence's are named by step
    ("step 2 decode: logits")."""
    if not test.steps:
        return step_outputs(spec, test, test.calls[0])
    return tuple(
        f"step {number} {step.method}: {name}"
        for number, step in enumerate(test.steps, start=1)
        for name in step_outputs(spec, test, step)
    )


def output_decimals(spec: ExerciseSpec, test: TestCaseSpec) -> tuple[int, ...]:
    """Each compared output's tolerance: the test's, else its output's, else the default."""
    return tuple(
        test.decimals or spec.decimals.get(name, DECIMALS)
        for step in test.calls
        for name in step_outputs(spec, test, step)
    )


def build_call(
    spec: ExerciseSpec,
    test: TestCaseSpec,
    inputs: tuple[Inputs, ...],
    parameters: dict[str, np.ndarray] | None,
) -> Call:
    """The test's call on `inputs` (one per call of the test): its one call, or its steps, on
    the entry point it names; with `parameters`, the grader's weights loaded by name."""
    steps = tuple(
        Step(step.method, args, step_outputs(spec, test, step), grad=_with_grad(spec, step))
        for step, args in zip(test.steps, inputs, strict=False)
    )
    return Call(
        id=test.name,
        args=() if steps else inputs[0],
        init_kwargs=dict(test.init),
        seed=None if parameters is None else CONSTRUCTION_SEED,
        parameters=parameters or {},
        entry_point=test.entry,
        kind=None if test.entry is None else spec.entry_kind(test).value,
        outputs=None if test.entry is None else step_outputs(spec, test, test.calls[0]),
        steps=steps,
        train=test.mode is Mode.TRAIN,
    )


def _with_grad(spec: ExerciseSpec, step: StepSpec) -> bool:
    return step.method != FORWARD and spec.methods[step.method].grad


def is_plain(test: TestCaseSpec) -> bool:
    """One eval-mode call of the main entry point: where gradient passes, stability and
    property probes look (their evidence assumes exactly that call)."""
    return not test.steps and test.mode is Mode.EVAL and test.entry is None
