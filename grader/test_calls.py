"""How a test calls the submission, read from its spec: which entry point, which steps, and the
name and tolerance of every output compared."""

from __future__ import annotations

from grader.compare import DECIMALS
from grader.contract import FORWARD
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


def is_plain(test: TestCaseSpec) -> bool:
    """One eval-mode call of the main entry point: where gradient passes, stability and
    property probes look (their evidence assumes exactly that call)."""
    return not test.steps and test.mode is Mode.EVAL and test.entry is None
