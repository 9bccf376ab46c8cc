"""A call's gradient pass: what a training loop would do with the module, once.

The same code runs in the sandboxed child on a submission and in the grader on the reference
(`grader.call_execution`): build the module as the forward call does, run it with gradients on
and the drawn inputs requiring grad, backpropagate the call's seeded cotangents, read every
gradient, take one SGD step on `module.parameters()` (what an optimizer can see), and run the
forward again. Eval mode throughout: dropout would make the step depend on the RNG.

Rounding that the exercise's contract asks for (`torch.round(out, decimals=4)`) has a zero
gradient: during the pass it is the identity for gradients (straight-through), in both programs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from grader.contract import MAX_GRADIENT_ELEMENTS, Call, Gradients, OutputValue, ParameterGradient

_ROUNDING = frozenset({torch.round, torch.Tensor.round})


class StraightThroughRounding(TorchFunctionMode):
    """`round` keeps its value and passes gradients through unchanged."""

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        result = func(*args, **(kwargs or {}))
        source = args[0] if args else None
        if func not in _ROUNDING or type(result) is not torch.Tensor:
            return result
        if isinstance(source, torch.Tensor) and source.requires_grad:
            return source + (result - source).detach()
        return result


def backpropagate(
    forward: Callable[..., Any],
    module: torch.nn.Module | None,
    args: list[Any],
    call: Call,
    describe: Callable[[Any], tuple[OutputValue, ...]],
) -> tuple[tuple[OutputValue, ...], Gradients]:
    """The forward outputs with gradients on, and what the backward pass and the step found.
    Raises what the submission raises (a `.numpy()` on a tensor that requires grad, say)."""
    request, max_elements = call.backprop, MAX_GRADIENT_ELEMENTS
    assert request is not None, "a call without a gradient pass"
    pristine = _copies(args)  # for the forward after the step: the code may change its inputs
    leaves = _differentiate(args, request.wrt)
    with torch.enable_grad(), StraightThroughRounding():
        result = forward(*args)
        outputs = describe(result)
        roots = _roots(result, request.cotangents)
        if roots:
            # The scalar sum of each output times its cotangent: the same gradients as
            # backward(outputs, cotangents), which imports sympy to check their shapes (100 MiB
            # in every warm process; a confined child could not import it at all).
            loss = sum(((output * cotangent).sum() for output, cotangent in roots), torch.zeros(()))
            loss.backward()
    inputs = tuple(
        _array(leaves[position].grad, max_elements) if position in leaves else None
        for position in range(len(args))
    )
    if module is None:
        return outputs, Gradients(graph=bool(roots), inputs=inputs)
    parameters = tuple(
        ParameterGradient(
            name=name,
            shape=tuple(int(size) for size in parameter.shape),
            trainable=bool(parameter.requires_grad),
            gradient=_array(parameter.grad, max_elements),
        )
        for name, parameter in module.named_parameters()
    )
    _sgd_step(module, request.learning_rate)
    with torch.no_grad():
        stepped = describe(forward(*pristine))
    return outputs, Gradients(bool(roots), inputs, parameters, stepped)


def _differentiate(args: list[Any], wrt: tuple[int, ...]) -> dict[int, torch.Tensor]:
    """A leaf requiring grad for each floating tensor at a position of `wrt` (at its first
    position, for an argument passed twice), by position; the code gets a copy of it in `args`
    (the same copy wherever the argument was passed), so that an in-place change of an input,
    which autograd refuses on a leaf, runs as it would in training."""
    leaves: dict[int, torch.Tensor] = {}
    copies: dict[int, torch.Tensor] = {}
    for position in wrt:
        arg = args[position] if position < len(args) else None
        if type(arg) is torch.Tensor and arg.is_floating_point() and id(arg) not in copies:
            leaves[position] = arg.detach().requires_grad_(True)
            copies[id(arg)] = leaves[position].clone()
    args[:] = [copies.get(id(arg), arg) for arg in args]
    return leaves


def _copies(args: list[Any]) -> list[Any]:
    """Fresh copies of the tensor arguments, an argument passed twice still one tensor."""
    copies: dict[int, torch.Tensor] = {}
    for arg in args:
        if type(arg) is torch.Tensor and id(arg) not in copies:
            copies[id(arg)] = arg.detach().clone()
    return [copies.get(id(arg), arg) for arg in args]


def _roots(result: Any, cotangents: tuple[np.ndarray, ...]) -> list[tuple[torch.Tensor, Any]]:
    """Each output that carries a graph, paired with its cotangent (shapes must agree)."""
    items = result if type(result) in (tuple, list) and len(cotangents) > 1 else (result,)
    return [
        (item, torch.from_numpy(np.array(cotangent, copy=True)).to(item.dtype))
        for item, cotangent in zip(items, cotangents, strict=False)
        if type(item) is torch.Tensor
        and item.requires_grad
        and item.is_floating_point()
        and tuple(item.shape) == cotangent.shape
    ]


def _sgd_step(module: torch.nn.Module, learning_rate: float) -> None:
    with torch.no_grad():
        for parameter in module.parameters():
            if parameter.grad is not None:
                parameter.sub_(learning_rate * parameter.grad)


def _array(gradient: object, max_elements: int) -> np.ndarray | None:
    if type(gradient) is not torch.Tensor or gradient.numel() > max_elements:
        return None
    if gradient.dtype not in (torch.float32, torch.float64):
        return None
    return gradient.detach().cpu().contiguous().numpy().copy()
