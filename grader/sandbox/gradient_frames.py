"""A gradient pass's findings (`grader.contract.Gradients`) in a `finished` event.

The header describes them; their arrays follow the outputs' in the frame, in order: the
arguments' gradients, the parameters', then the outputs after the SGD step. Decoded as hostile
like the rest of the event: every array must have the shape its description (or, for an
argument, the job's own array) fixes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from grader.contract import Call, Gradients, OutputValue, ParameterGradient
from grader.sandbox.frames import MAX_NAME, ProtocolError, parse_shape, parse_text, typed

# More than any exercise's module registers; a child claiming more is not our code.
MAX_PARAMETERS = 4096
_GRADIENT_DTYPES = ("float32", "float64")

OutputsEncoder = Callable[[tuple[OutputValue, ...], list[np.ndarray]], list[dict[str, Any]]]
OutputsDecoder = Callable[[list[Any], Iterator[np.ndarray]], tuple[OutputValue, ...]]


def encode_gradients(
    gradients: Gradients, arrays: list[np.ndarray], encode_outputs: OutputsEncoder
) -> dict[str, Any]:
    """The header of `gradients`, appending their arrays to `arrays`."""
    return {
        "graph": gradients.graph,
        "inputs": [_carry(gradient, arrays) for gradient in gradients.inputs],
        "parameters": [
            {
                "name": parameter.name,
                "shape": list(parameter.shape),
                "trainable": parameter.trainable,
                "gradient": _carry(parameter.gradient, arrays),
            }
            for parameter in gradients.parameters
        ],
        "stepped": encode_outputs(gradients.stepped, arrays),
    }


def _carry(gradient: np.ndarray | None, arrays: list[np.ndarray]) -> bool:
    if gradient is None or gradient.dtype.name not in _GRADIENT_DTYPES:
        return False
    arrays.append(gradient)
    return True


def decode_gradients(
    header: object, call: Call, arrays: Iterator[np.ndarray], decode_outputs: OutputsDecoder
) -> Gradients | None:
    if header is None:
        return None
    if call.backprop is None:
        raise ProtocolError("gradients for a call that asked for none")
    fields = typed(header, dict, "'gradients'")
    claimed = typed(fields.get("inputs"), list, "the inputs' gradients")
    if len(claimed) != len(call.args):
        raise ProtocolError(f"{len(claimed)} input gradients for {len(call.args)} arguments")
    inputs = tuple(
        _gradient(carried, arrays, _differentiated(call, position))
        for position, carried in enumerate(claimed)
    )
    items = typed(fields.get("parameters"), list, "'parameters'")
    if len(items) > MAX_PARAMETERS:
        raise ProtocolError(f"{len(items)} parameters")
    parameters = tuple(_parameter(typed(item, dict, "a parameter"), arrays) for item in items)
    stepped_items = typed(fields.get("stepped"), list, "'stepped'")
    # A function has no parameters to step: nothing after the step.
    stepped = decode_outputs(stepped_items, arrays) if stepped_items else ()
    return Gradients(typed(fields.get("graph"), bool, "'graph'"), inputs, parameters, stepped)


def _differentiated(call: Call, position: int) -> tuple[int, ...] | None:
    """The shape of the argument at `position` where the call differentiates it, else None
    (no gradient may come back for it)."""
    arg = call.args[position]
    wrt = call.backprop.wrt if call.backprop else ()
    return arg.shape if isinstance(arg, np.ndarray) and position in wrt else None


def _parameter(obj: dict[str, Any], arrays: Iterator[np.ndarray]) -> ParameterGradient:
    shape = parse_shape(obj.get("shape"))
    return ParameterGradient(
        name=parse_text(obj, "name", MAX_NAME),
        shape=shape,
        trainable=typed(obj.get("trainable"), bool, "'trainable'"),
        gradient=_gradient(obj.get("gradient"), arrays, shape),
    )


def _gradient(
    carried: object, arrays: Iterator[np.ndarray], shape: tuple[int, ...] | None
) -> np.ndarray | None:
    if not typed(carried, bool, "a gradient's flag"):
        return None
    array = next(arrays, None)
    if array is None:
        raise ProtocolError("a gradient claims an array the frame does not carry")
    if array.shape != shape or array.dtype.name not in _GRADIENT_DTYPES:
        raise ProtocolError(f"a gradient of {array.dtype} {array.shape} for a value of {shape}")
    return array
