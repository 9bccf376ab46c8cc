"""A `Call` as plain, JSON-ready fields whose arrays are referred to rather than held: the job's
frame to a child (`grader.sandbox.protocol`) and the plan cache (`grader.plan_format`) write and
read calls this one way, each referring to its arrays its own way (an index, a name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from grader.contract import Backprop, Call, Inputs, Step


def call_fields(call: Call, refer: Callable[[np.ndarray], object]) -> dict[str, Any]:
    return {
        "id": call.id,
        "args": _args_fields(call.args, refer),
        "init_kwargs": call.init_kwargs,
        "seed": call.seed,
        "parameters": {name: refer(value) for name, value in call.parameters.items()},
        "strict_parameters": call.strict_parameters,
        "max_output_elements": call.max_output_elements,
        "backprop": None if call.backprop is None else _backprop_fields(call.backprop, refer),
        "entry_point": call.entry_point,
        "kind": call.kind,
        "outputs": None if call.outputs is None else list(call.outputs),
        "steps": [
            {
                "method": step.method,
                "args": _args_fields(step.args, refer),
                "outputs": list(step.outputs),
                "grad": step.grad,
            }
            for step in call.steps
        ],
        "train": call.train,
    }


def _args_fields(args: Inputs, refer: Callable[[np.ndarray], object]) -> list[object]:
    """An array by reference, a scalar as itself (in a table of its own: a reference may be a
    number too)."""
    return [
        arg if arg is None else refer(arg) if isinstance(arg, np.ndarray) else {"scalar": arg}
        for arg in args
    ]


def _args(fields: list[Any], array: Callable[[Any], np.ndarray]) -> Inputs:
    return tuple(
        None if ref is None else ref["scalar"] if isinstance(ref, dict) else array(ref)
        for ref in fields
    )


def _backprop_fields(backprop: Backprop, refer: Callable[[np.ndarray], object]) -> dict[str, Any]:
    return {
        "cotangents": [refer(cotangent) for cotangent in backprop.cotangents],
        "learning_rate": backprop.learning_rate,
        "wrt": list(backprop.wrt),
    }


def call_from_fields(fields: Mapping[str, Any], array: Callable[[Any], np.ndarray]) -> Call:
    return Call(
        id=fields["id"],
        args=_args(fields["args"], array),
        init_kwargs=fields["init_kwargs"],
        seed=fields["seed"],
        parameters={name: array(ref) for name, ref in fields["parameters"].items()},
        strict_parameters=fields["strict_parameters"],
        max_output_elements=fields["max_output_elements"],
        backprop=_backprop(fields["backprop"], array),
        entry_point=fields["entry_point"],
        kind=fields["kind"],
        outputs=None if fields["outputs"] is None else tuple(fields["outputs"]),
        steps=tuple(
            Step(
                method=step["method"],
                args=_args(step["args"], array),
                outputs=tuple(step["outputs"]),
                grad=bool(step["grad"]),
            )
            for step in fields["steps"]
        ),
        train=bool(fields["train"]),
    )


def _backprop(
    fields: Mapping[str, Any] | None, array: Callable[[Any], np.ndarray]
) -> Backprop | None:
    if fields is None:
        return None
    return Backprop(
        cotangents=tuple(array(ref) for ref in fields["cotangents"]),
        learning_rate=float(fields["learning_rate"]),
        wrt=tuple(int(position) for position in fields["wrt"]),
    )
