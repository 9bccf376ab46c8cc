"""An exercise's grading plan: every call to make on a submission and the expected outputs.

A plan depends only on the exercise and the deployment secret, so it is built once, in the
trusted process, and reused for every submission: reference outputs are computed once per input
set. A visible test has one input set. A hidden test has `HIDDEN_INPUT_SETS`, drawn from the
secret, and each submission is graded on one of them picked at random (`ExercisePlan.draw`): a
submission that learns its hidden inputs (the sandbox's language layer is assumed to fail)
gets nothing a later submission could look up.

Visible and hidden tests run in separate children (`visible_job`, `hidden_job`): the visible
one, whose prints, errors and probes the student sees, never holds a hidden input.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from grader.contract import Call, Job, OutputValue, Policy
from grader.inputs import Inputs, make_inputs, perturb, seeds_for
from grader.properties import PROPERTIES, Property
from grader.reference import Reference, run_trusted
from grader.spec import (
    EntryKind,
    Exercise,
    ExerciseSpec,
    RandomTensor,
    TestCaseSpec,
    Visibility,
    WeightSource,
)
from grader.variants import WrongVariant

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
class Case:
    """One input set of a test: the call on it and the reference's outputs."""

    call: Call
    expected: tuple[OutputValue, ...]


@dataclass(frozen=True)
class TestPlan:
    __test__ = False  # a domain type, not a pytest test class

    spec: TestCaseSpec
    cases: tuple[Case, ...]  # one for a visible test, HIDDEN_INPUT_SETS for a hidden one
    output_names: tuple[str, ...]
    probes: tuple[Probe, ...] = ()

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


@dataclass
class ExercisePlan:
    exercise: Exercise
    reference: Reference
    tests: tuple[TestPlan, ...]
    _variant_outputs: dict[tuple[str, WrongVariant], tuple[OutputValue, ...] | None] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def visible_job(self, source: str) -> Job:
        """The visible tests, then their probes: a probe that hangs or crashes never costs a test
        its result."""
        visible = [test for test in self.tests if test.visible]
        calls = [test.call for test in visible]
        calls += [probe.call for test in visible for probe in test.probes]
        return make_job(self.exercise.spec, source, tuple(calls))

    def draw(self) -> Draw:
        """An input set for each hidden test, picked at random for one submission."""
        return {
            test.spec.name: secrets.choice(test.cases) for test in self.tests if not test.visible
        }

    def hidden_job(self, source: str, draw: Draw) -> Job:
        """The hidden tests, each on its drawn input set."""
        calls = tuple(draw[test.spec.name].call for test in self.tests if not test.visible)
        return make_job(self.exercise.spec, source, calls)

    def variant_outputs(
        self, test: TestPlan, variant: WrongVariant
    ) -> tuple[OutputValue, ...] | None:
        """The outputs of a known-wrong variant on a test, computed once; None if it can't run
        on that test (a variant with other parameter names, say). Cached by the variant itself,
        not its code: one mistake written two ways is two variants with one code."""
        key = (test.spec.name, variant)
        with self._lock:
            if key not in self._variant_outputs:
                job = make_job(self.exercise.spec, "", (test.call,))
                self._variant_outputs[key] = _try_run(variant.entry, test.call, job)
            return self._variant_outputs[key]


def make_job(spec: ExerciseSpec, source: str, calls: tuple[Call, ...]) -> Job:
    return Job(
        source=source,
        entry_point=spec.entry_point,
        kind=spec.kind.value,
        framework=spec.framework.value,
        policy=Policy(tuple(spec.allowed_imports), tuple(spec.forbidden)),
        calls=calls,
        limits=spec.limits.to_limits(),
        output_count=len(spec.outputs),
    )


def build_plan(exercise: Exercise, secret: str) -> ExercisePlan:
    reference = Reference.load(exercise)
    probed: Counter[ProbeKind] = Counter()
    tests = []
    for test in exercise.spec.tests:
        seeds = seeds_for(exercise.spec, test, secret, HIDDEN_INPUT_SETS)
        cases = tuple(_case(exercise, reference, test, seed) for seed in seeds)
        probes: tuple[Probe, ...] = ()
        if test.visibility is Visibility.VISIBLE:
            candidates = _probes(exercise, reference, test, cases[0].call, seeds[0])
            probes = tuple(p for p in candidates if probed[p.kind] < PROBED_TESTS_PER_KIND)
            probed.update(probe.kind for probe in probes)
        tests.append(TestPlan(test, cases, tuple(exercise.spec.outputs), probes))
    return ExercisePlan(exercise, reference, tuple(tests))


def _case(exercise: Exercise, reference: Reference, test: TestCaseSpec, seed: int) -> Case:
    call = _main_call(exercise, reference, test, seed, make_inputs(test, seed))
    return Case(call, reference.run(call, make_job(exercise.spec, "", (call,))))


def _main_call(
    exercise: Exercise, reference: Reference, test: TestCaseSpec, seed: int, inputs: Inputs
) -> Call:
    grader_weights = exercise.spec.weights is WeightSource.GRADER
    return Call(
        id=test.name,
        args=inputs,
        init_kwargs=dict(test.init),
        seed=CONSTRUCTION_SEED if grader_weights else None,
        parameters=reference.draw_parameters(test.init, seed) if grader_weights else {},
    )


def _probes(
    exercise: Exercise, reference: Reference, test: TestCaseSpec, call: Call, seed: int
) -> tuple[Probe, ...]:
    """Extra calls on a visible test that tell why a submission fails."""
    probes = []
    inputs = call.args
    shape = test.inputs[0].shape if isinstance(test.inputs[0], RandomTensor) else ()
    wanted = set(exercise.spec.properties)
    for prop, definition in PROPERTIES.items():
        redrawn = definition.redraw(shape) if prop in wanted else None
        if redrawn is not None:
            probes.append(_probe(prop, call, args=perturb(test, inputs, seed, redrawn)))
    if reference.weight_probe is not None and exercise.spec.kind is EntryKind.MODULE:
        parameters = reference.probe_parameters(dict(test.init))
        probes.append(_probe(WEIGHTS, call, parameters=parameters, strict_parameters=False))
    return tuple(probes)


def _probe(kind: ProbeKind, call: Call, **changes: Any) -> Probe:
    return Probe(kind, dataclasses.replace(call, id=f"{call.id} [{kind}]", **changes))


def _try_run(entry: object, call: Call, job: Job) -> tuple[OutputValue, ...] | None:
    try:
        return run_trusted(entry, call, job)
    except Exception:
        return None
