"""An exercise's grading plan: every call to make on a submission and the expected outputs.

A plan depends only on the exercise and the deployment secret, so it is built once, in the
trusted process, and reused for every submission: reference outputs are computed once per input
set. A visible test has one input set. A hidden test has `HIDDEN_INPUT_SETS`, drawn from the
secret, and each submission is graded on one of them picked at random (`ExercisePlan.draw`): a
submission that learns its hidden inputs (the sandbox's language layer is assumed to fail)
gets nothing a later submission could look up.

Where the exercise checks trainability (`grader.trainability`), a case carries a gradient pass
and a visible test inputs scaled up, each run after every test's own call.

Visible and hidden tests run in separate children (`visible_job`, `hidden_job`): the visible
one, whose prints, errors and probes the student sees, never holds a hidden input.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from grader.contract import Call, Gradients, Job, OutputValue, Policy
from grader.spec import Exercise, ExerciseSpec, Property, TestCaseSpec, Visibility

# Probes on two visible tests give the same evidence as probes on all of them, at a fraction of
# the cost: they are most of the calls a submission runs.
PROBED_TESTS_PER_KIND = 2

# Input sets per hidden test: the chance that a submission meets the set an earlier one learnt is
# 1 in this. Each costs one reference run per hidden test, once per plan, and its arrays' memory.
HIDDEN_INPUT_SETS = 8

# The global RNG's seed before a submission's constructor runs, where the grader loads the
# weights: the same for every test, since one derived from a hidden test's seed would hand that
# seed to the submission (torch.initial_seed()).
CONSTRUCTION_SEED = 0


# A probe checks a property (`grader.properties`: part of the input redrawn), or loads the
# reference's weights by name (WEIGHTS: does the math match?).
WEIGHTS: Final = "weights"
ProbeKind = Property | Literal["weights"]


@dataclass(frozen=True)
class Probe:
    kind: ProbeKind
    call: Call


@dataclass(frozen=True)
class GradientCase:
    """An input set's gradient pass (`grader.backprop`): the call that asks for it, and what the
    reference's found."""

    call: Call
    expected: Gradients


@dataclass(frozen=True)
class Case:
    """One input set of a test: the call on it and the reference's outputs, and its gradient
    pass where the exercise checks trainability on it."""

    call: Call
    expected: tuple[OutputValue, ...]
    gradients: GradientCase | None = None


@dataclass(frozen=True)
class ScaledCase:
    """A visible test's inputs scaled up (stability), where the reference's outputs stay
    finite."""

    scale: float
    case: Case


@dataclass(frozen=True)
class TestPlan:
    __test__ = False  # a domain type, not a pytest test class

    spec: TestCaseSpec
    cases: tuple[Case, ...]  # one for a visible test, HIDDEN_INPUT_SETS for a hidden one
    output_names: tuple[str, ...]
    # Each output's tolerance, in decimals (`grader.test_calls.output_decimals`).
    decimals: tuple[int, ...]
    probes: tuple[Probe, ...] = ()
    scaled: tuple[ScaledCase, ...] = ()
    # A visible test's snippet that reproduces it at home (`grader.reproduce`); None if hidden.
    reproduce: str | None = None

    @property
    def visible(self) -> bool:
        return self.spec.visibility is Visibility.VISIBLE

    @property
    def call(self) -> Call:
        """A visible test's call (a hidden test's first input set)."""
        return self.cases[0].call

    @property
    def expected(self) -> tuple[OutputValue, ...]:
        return self.cases[0].expected


# The input set each hidden test is graded on for one submission, by test name.
Draw = dict[str, Case]


@dataclass(frozen=True)
class KnownMistake:
    """A known-wrong variant of the reference (`grader.variants.WrongVariant`), as diagnosis
    uses it: its finding, and its outputs on each visible test (None where it can't run on one:
    a variant with other parameter names, say). Variants may share a code: one mistake written
    two ways is two known mistakes with one code."""

    code: str
    message: str
    outputs: dict[str, tuple[OutputValue, ...] | None]  # by visible test name
    # The exercise's properties it breaks by itself (`grader.mistake_properties`).
    breaks: tuple[Property, ...] = ()
    # Its own knowledge components (an exported variant's); none: those of its code.
    concepts: tuple[str, ...] = ()
    # Two known mistakes made together (`grader.known_mistakes`): the other one's code and
    # message. A pair is named by a finding for each.
    partner: tuple[str, str] | None = None

    @property
    def findings(self) -> tuple[tuple[str, str], ...]:
        """The (code, message) of each finding this mistake names."""
        return ((self.code, self.message),) + ((self.partner,) if self.partner else ())


@dataclass(frozen=True)
class ExercisePlan:
    exercise: Exercise
    tests: tuple[TestPlan, ...]
    mistakes: tuple[KnownMistake, ...] = ()
    # The reference's weight probe's finding (`grader.variants.WeightProbe`), if it has one.
    weight_probe_message: str | None = None

    def visible_job(self, source: str) -> Job:
        """The visible tests, then their probes: a probe that hangs or crashes never costs a test
        its result."""
        visible = [test for test in self.tests if test.visible]
        calls = [test.call for test in visible]
        calls += [probe.call for test in visible for probe in test.probes]
        calls += _gradient_calls(test.cases[0] for test in visible)
        calls += [scaled.case.call for test in visible for scaled in test.scaled]
        return make_job(self.exercise.spec, source, tuple(calls))

    def draw(self) -> Draw:
        """An input set for each hidden test, picked at random for one submission."""
        return {
            test.spec.name: secrets.choice(test.cases) for test in self.tests if not test.visible
        }

    def hidden_job(self, source: str, draw: Draw) -> Job:
        """The hidden tests, each on its drawn input set."""
        cases = [draw[test.spec.name] for test in self.tests if not test.visible]
        calls = [case.call for case in cases] + _gradient_calls(cases)
        return make_job(self.exercise.spec, source, tuple(calls))


def _gradient_calls(cases: Iterable[Case]) -> list[Call]:
    return [case.gradients.call for case in cases if case.gradients is not None]


def make_job(spec: ExerciseSpec, source: str, calls: tuple[Call, ...]) -> Job:
    return Job(
        source=source,
        entry_point=spec.entry_point,
        kind=spec.kind.value,
        framework=spec.framework.value,
        policy=Policy(tuple(spec.allowed_imports), tuple(spec.forbidden)),
        calls=calls,
        limits=spec.limits.to_limits(),
        outputs=tuple(spec.outputs),
    )
