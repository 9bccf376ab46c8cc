"""How a plan (`grader.plan`) is written to bytes and read back, for the plan cache.

An `.npz` archive, read with `allow_pickle=False`: the plan's arrays, plus one JSON manifest that
describes the rest and names its arrays. Unlike a pickle, nothing in it can execute, even should
the cache's HMAC check have a hole. An array shared by several calls (self-attention's query, key
and value are one array) is stored once and read back as one object, as the plan had it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from grader.call_fields import call_fields, call_from_fields
from grader.contract import Gradients, OutputValue, ParameterGradient
from grader.plan import (
    WEIGHTS,
    Case,
    ExercisePlan,
    GradientCase,
    KnownMistake,
    Probe,
    ProbeKind,
    ScaledCase,
    TestPlan,
)
from grader.spec import Exercise, Property
from grader.test_calls import output_decimals, output_names

# Raised whenever what is written, or how it is read, changes.
FORMAT = 7
_MANIFEST = "manifest"


class _Arrays:
    """The arrays of a plan being written, each named once however many calls share it."""

    def __init__(self) -> None:
        self.named: dict[str, np.ndarray] = {}
        self._names: dict[int, str] = {}

    def name(self, array: np.ndarray | None) -> str | None:
        if array is None:
            return None
        if id(array) not in self._names:
            self._names[id(array)] = f"a{len(self._names)}"
            self.named[self._names[id(array)]] = array
        return self._names[id(array)]


def encode(plan: ExercisePlan) -> bytes:
    arrays = _Arrays()
    manifest = {
        "tests": [
            {
                "cases": [_case(case, arrays) for case in test.cases],
                "scaled": [
                    {"scale": scaled.scale, "case": _case(scaled.case, arrays)}
                    for scaled in test.scaled
                ],
                "probes": [
                    {"kind": str(probe.kind), "call": call_fields(probe.call, arrays.name)}
                    for probe in test.probes
                ],
                "reproduce": test.reproduce,
            }
            for test in plan.tests
        ],
        "mistakes": [
            {
                "code": mistake.code,
                "message": mistake.message,
                "concepts": list(mistake.concepts),
                "partner": mistake.partner,
                "outputs": {
                    name: None if outputs is None else _outputs(outputs, arrays)
                    for name, outputs in mistake.outputs.items()
                },
                "breaks": [prop.value for prop in mistake.breaks],
            }
            for mistake in plan.mistakes
        ],
        "weight_probe_message": plan.weight_probe_message,
    }
    buffer = io.BytesIO()
    text = np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)
    members: dict[str, Any] = {_MANIFEST: text, **arrays.named}
    np.savez(buffer, allow_pickle=False, **members)
    return buffer.getvalue()


def _case(case: Case, arrays: _Arrays) -> dict[str, Any]:
    gradients = case.gradients
    return {
        "call": call_fields(case.call, arrays.name),
        "expected": _outputs(case.expected, arrays),
        "gradients": None
        if gradients is None
        else {
            "call": call_fields(gradients.call, arrays.name),
            "expected": _gradients(gradients.expected, arrays),
        },
    }


def _gradients(gradients: Gradients, arrays: _Arrays) -> dict[str, Any]:
    return {
        "graph": gradients.graph,
        "inputs": [arrays.name(gradient) for gradient in gradients.inputs],
        "parameters": [
            {
                "name": parameter.name,
                "shape": parameter.shape,
                "trainable": parameter.trainable,
                "gradient": arrays.name(parameter.gradient),
            }
            for parameter in gradients.parameters
        ],
        "stepped": _outputs(gradients.stepped, arrays),
    }


def _outputs(outputs: tuple[OutputValue, ...], arrays: _Arrays) -> list[dict[str, Any]]:
    return [
        {
            "type_name": output.type_name,
            "array": arrays.name(output.array),
            "dtype": output.dtype,
            "shape": output.shape,
        }
        for output in outputs
    ]


def decode(exercise: Exercise, body: bytes) -> ExercisePlan:
    with np.load(io.BytesIO(body), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    manifest = json.loads(arrays.pop(_MANIFEST).tobytes())
    specs = exercise.spec.tests
    if len(manifest["tests"]) != len(specs):
        raise ValueError("the plan's tests are not the exercise's")
    tests = tuple(
        TestPlan(
            spec,
            tuple(_read_case(case, arrays) for case in stored["cases"]),
            output_names(exercise.spec, spec),
            output_decimals(exercise.spec, spec),
            tuple(
                Probe(
                    _probe_kind(probe["kind"]), call_from_fields(probe["call"], arrays.__getitem__)
                )
                for probe in stored["probes"]
            ),
            tuple(
                ScaledCase(scaled["scale"], _read_case(scaled["case"], arrays))
                for scaled in stored["scaled"]
            ),
            stored["reproduce"],
        )
        for spec, stored in zip(specs, manifest["tests"], strict=True)
    )
    mistakes = tuple(
        KnownMistake(
            stored["code"],
            stored["message"],
            {
                name: None if outputs is None else _read_outputs(outputs, arrays)
                for name, outputs in stored["outputs"].items()
            },
            tuple(Property(prop) for prop in stored["breaks"]),
            tuple(stored["concepts"]),
            None if stored["partner"] is None else (stored["partner"][0], stored["partner"][1]),
        )
        for stored in manifest["mistakes"]
    )
    return ExercisePlan(exercise, tests, mistakes, manifest["weight_probe_message"])


def _read_case(stored: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Case:
    gradients = stored["gradients"]
    return Case(
        call_from_fields(stored["call"], arrays.__getitem__),
        _read_outputs(stored["expected"], arrays),
        None
        if gradients is None
        else GradientCase(
            call_from_fields(gradients["call"], arrays.__getitem__),
            _read_gradients(gradients["expected"], arrays),
        ),
    )


def _read_gradients(stored: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Gradients:
    return Gradients(
        graph=stored["graph"],
        inputs=tuple(None if name is None else arrays[name] for name in stored["inputs"]),
        parameters=tuple(
            ParameterGradient(
                name=parameter["name"],
                shape=tuple(parameter["shape"]),
                trainable=parameter["trainable"],
                gradient=None if parameter["gradient"] is None else arrays[parameter["gradient"]],
            )
            for parameter in stored["parameters"]
        ),
        stepped=_read_outputs(stored["stepped"], arrays),
    )


def _read_outputs(
    stored: list[Mapping[str, Any]], arrays: Mapping[str, np.ndarray]
) -> tuple[OutputValue, ...]:
    return tuple(
        OutputValue(
            type_name=output["type_name"],
            array=None if output["array"] is None else arrays[output["array"]],
            dtype=output["dtype"],
            shape=None if output["shape"] is None else tuple(output["shape"]),
        )
        for output in stored
    )


def _probe_kind(stored: str) -> ProbeKind:
    return WEIGHTS if stored == WEIGHTS else Property(stored)
