"""Build an exercise's plan (`grader.plan`): run the trusted reference, in this process, on
every input set of every test, on the visible tests' probes, and its known mistakes on the
visible tests (`grader.known_mistakes`). This is where the grader imports torch: a plan read
from the cache (`grader.plan_cache`) needs none of it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from grader.contract import Call
from grader.input_specs import RandomTensor
from grader.inputs import make_call_inputs, perturb, seeds_for
from grader.known_mistakes import known_mistakes
from grader.plan import (
    HIDDEN_INPUT_SETS,
    PROBED_TESTS_PER_KIND,
    WEIGHTS,
    Case,
    ExercisePlan,
    Probe,
    ProbeKind,
    ScaledCase,
    TestPlan,
    make_job,
)
from grader.properties import PROPERTIES
from grader.reference import Reference
from grader.reproduce import reproduce_snippet
from grader.sandbox.torch_setup import configure_for_references
from grader.spec import (
    Exercise,
    TestCaseSpec,
    Visibility,
    WeightSource,
)
from grader.test_calls import build_call, is_plain, output_decimals, output_names
from grader.trainability_plan import gradient_case, scaled_cases
from grader.trainability_spec import GRADIENT_PASS, TrainabilityCheck


def build_plan(exercise: Exercise, secret: str) -> ExercisePlan:
    configure_for_references()
    reference = Reference.load(exercise)
    probed: Counter[ProbeKind] = Counter()
    tests = []
    visible_seen = 0
    spec = exercise.spec
    for test in spec.tests:
        # Gradient passes, stability and probes assume one eval-mode call of the main entry.
        plain = is_plain(test)
        visible = test.visibility is Visibility.VISIBLE
        # The first visible tests are where reported checks and stability look (as probes do).
        first_visible = plain and visible and visible_seen < PROBED_TESTS_PER_KIND
        visible_seen += plain and visible
        seeds = seeds_for(spec, test, secret, HIDDEN_INPUT_SETS)
        # Gradient passes on the first visible tests, and where they are scored on every hidden
        # test too (each costs about three forwards).
        hidden_scored = plain and not visible and spec.trainability.scored
        backprop = _checks_gradients(exercise) and (first_visible or hidden_scored)
        cases = tuple(_case(exercise, reference, test, seed, backprop=backprop) for seed in seeds)
        probes: tuple[Probe, ...] = ()
        scaled: tuple[ScaledCase, ...] = ()
        if visible and plain:
            candidates = _probes(exercise, reference, test, cases[0].call, seeds[0])
            probes = tuple(p for p in candidates if probed[p.kind] < PROBED_TESTS_PER_KIND)
            probed.update(probe.kind for probe in probes)
        if first_visible and TrainabilityCheck.STABILITY in spec.trainability_checks:
            scaled = scaled_cases(exercise, reference, test, cases[0].call)
        names, decimals = output_names(spec, test), output_decimals(spec, test)
        entry = reference.entries[test.entry or spec.entry_point]
        reproduce = reproduce_snippet(spec, test, cases[0].call, entry)
        tests.append(TestPlan(test, cases, names, decimals, probes, scaled, reproduce))
    mistakes = known_mistakes(exercise, reference.variants, tests)
    weight_probe = reference.weight_probe
    message = weight_probe.message if weight_probe else None
    return ExercisePlan(exercise, tuple(tests), mistakes, message)


def _checks_gradients(exercise: Exercise) -> bool:
    return any(check in exercise.spec.trainability_checks for check in GRADIENT_PASS)


def _case(
    exercise: Exercise, reference: Reference, test: TestCaseSpec, seed: int, *, backprop: bool
) -> Case:
    call = _main_call(exercise, reference, test, seed)
    case = Case(call, reference.run(call, make_job(exercise.spec, "", (call,))))
    if not backprop:
        return case
    return dataclasses.replace(case, gradients=gradient_case(exercise, reference, test, case, seed))


def _main_call(exercise: Exercise, reference: Reference, test: TestCaseSpec, seed: int) -> Call:
    spec = exercise.spec
    # The grader's weights are the main module's: another entry point makes its own.
    grader_weights = spec.weights is WeightSource.GRADER and test.entry is None
    parameters = reference.draw_parameters(test.init, seed) if grader_weights else None
    return build_call(spec, test, make_call_inputs(test, seed), parameters)


def _probes(
    exercise: Exercise, reference: Reference, test: TestCaseSpec, call: Call, seed: int
) -> tuple[Probe, ...]:
    """Extra calls on a visible test that tell why a submission fails."""
    probes = []
    inputs = call.args
    first = test.inputs[0]
    shape = first.shape if isinstance(first, RandomTensor) else ()
    wanted = set(exercise.spec.properties)
    for prop, definition in PROPERTIES.items():
        redrawn = definition.redraw(shape) if prop in wanted else None
        if redrawn is not None:
            probes.append(_probe(prop, call, args=perturb(test, inputs, seed, redrawn)))
    if reference.weight_probe is not None:
        parameters = reference.probe_parameters(dict(test.init))
        probes.append(_probe(WEIGHTS, call, parameters=parameters, strict_parameters=False))
    return tuple(probes)


def _probe(kind: ProbeKind, call: Call, **changes: Any) -> Probe:
    return Probe(kind, dataclasses.replace(call, id=f"{call.id} [{kind}]", **changes))
