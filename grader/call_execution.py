"""Carry out the calls of a job against an entry point, and describe what they returned.

The same code runs a submission inside the sandbox and the trusted reference in the grader's own
process, so both are constructed, loaded and called in exactly the same way.
"""

from __future__ import annotations

import difflib
import inspect
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import torch

from grader.backprop import backpropagate
from grader.contract import (
    FORWARD,
    MISSING_PARAMETERS,
    SHAPE_ASKED,
    UNEXPECTED_PARAMETERS,
    Call,
    CallOutcome,
    Gradients,
    Inputs,
    Job,
    OutputValue,
    RaisedError,
    Violation,
)

# The file name the submission is compiled under, so tracebacks can point at its lines.
SUBMISSION_FILENAME = "<submission>"

# Dtypes whose values travel back; any other dtype is reported by name and shape alone.
_TRANSFERABLE_TORCH_DTYPES = {
    torch.float16,
    torch.float32,
    torch.float64,
    torch.int32,
    torch.int64,
    torch.bool,
}


# The global RNG's seed right before each call in train mode (dropout's masks). One for every
# test: a seed derived from a hidden test's would hand it to the submission.
TRAIN_MODE_SEED = 0


class ContractError(Exception):
    """The submission does not have the shape the exercise asks for (wrong parameter names, a
    constructor that returns no module...). Reported to the student as is, without its name."""


def entry_points(job: Job) -> dict[str, str]:
    """Every entry point the job's calls use, with its kind ("module" or "function")."""
    used = {job.entry_point: job.kind}
    used.update((call.entry_of(job), call.kind_of(job)) for call in job.calls)
    return used


def missing_entry_point(job: Job, namespace: Mapping[str, object]) -> Violation | None:
    """The refusal of a loaded submission that lacks an entry point the job calls, naming the
    closest name it does define; None when they are all there."""
    for name, kind in entry_points(job).items():
        if namespace.get(name) is None:
            return _missing(name, kind, namespace)
    return None


def _missing(entry_point: str, kind: str, namespace: Mapping[str, object]) -> Violation:
    what = "class" if kind == "module" else "function"
    message = f"your code defines no `{entry_point}`, the {what} this exercise grades"
    defined = _defined_names(namespace)
    by_lowercase = {name.lower(): name for name in defined}
    closest = difflib.get_close_matches(entry_point.lower(), by_lowercase, n=1, cutoff=0.6)
    if closest:
        return Violation(f"{message}: did you mean `{by_lowercase[closest[0]]}`?")
    if defined:
        return Violation(f"{message}; it defines {', '.join(f'`{n}`' for n in defined[:5])}")
    return Violation(f"{message}: it defines no class or function at all")


def _defined_names(namespace: Mapping[str, object]) -> list[str]:
    """The classes and functions the submission itself defined at its top level."""
    home = namespace.get("__name__")
    return sorted(
        name
        for name, value in namespace.items()
        if callable(value)
        and not name.startswith("__")
        and getattr(value, "__module__", None) == home
    )


def run_calls(
    entries: Mapping[str, object],
    job: Job,
    take_stdout: Callable[[], str] = lambda: "",
    on_start: Callable[[Call], None] = lambda call: None,
) -> Iterator[CallOutcome]:
    """Run each call of `job` in turn on its entry point (found in `entries` by name), yielding
    one outcome per call.

    An exception raised by the entry becomes the outcome's error; it never escapes.
    """
    for call in job.calls:
        on_start(call)
        started = time.perf_counter()
        gradients = None
        try:
            outputs: tuple[OutputValue, ...] | None
            outputs, gradients = run_call(entries[call.entry_of(job)], call, job)
            error = None
        except Exception as exc:  # the student's exception is data, not our failure
            outputs, error = None, describe_exception(exc)
        yield CallOutcome(
            call_id=call.id,
            outputs=outputs,
            error=error,
            stdout=take_stdout(),
            duration_s=time.perf_counter() - started,
            gradients=gradients,
        )


def run_call(entry: Any, call: Call, job: Job) -> tuple[tuple[OutputValue, ...], Gradients | None]:
    """Construct (for a module) and call the entry point once, without grad, or run the call's
    gradient pass (`grader.backprop`), or make each of its steps; raise what the entry raises."""
    name = call.entry_of(job)
    with torch.no_grad():
        module = _construct(entry, call, name) if call.kind_of(job) == "module" else None
    forward = entry if module is None else module
    if call.steps:
        return _run_steps(forward, call, job, name), None
    args = _as_framework_values(call.args, job.framework)

    def describe(result: Any) -> tuple[OutputValue, ...]:
        return describe_result(result, call.outputs_of(job), call.max_output_elements)

    if call.backprop is not None:
        return backpropagate(forward, module, args, call, describe)
    with torch.no_grad():
        return describe(_seeded(call, forward)(*args)), None


def _run_steps(forward: Any, call: Call, job: Job, name: str) -> tuple[OutputValue, ...]:
    """Each step's call on the one instance, in order; every step gives exactly its number of
    outputs (a value that does not split into them describes each), so names stay aligned."""
    outputs: list[OutputValue] = []
    for step in call.steps:
        target = forward if step.method == FORWARD else _method(forward, step.method, name)
        args = _as_framework_values(step.args, job.framework)
        with torch.set_grad_enabled(step.grad):
            result = _seeded(call, target)(*args)
        described = describe_result(result, step.outputs, call.max_output_elements)
        if len(described) != len(step.outputs):
            described = described[:1] * len(step.outputs)
        outputs += described
    return tuple(outputs)


def _method(instance: Any, method: str, name: str) -> Callable[..., Any]:
    found: Callable[..., Any] | None = getattr(instance, method, None)
    if not callable(found):
        raise ContractError(f"the grader calls `{name}.{method}(...)`, which your code lacks")
    return found


def _seeded(call: Call, target: Callable[..., Any]) -> Callable[..., Any]:
    """`target`, called in train mode right after seeding the global RNG: dropout then draws
    the same masks in the reference and in any code that draws them at the same places."""
    if not call.train:
        return target

    def seeded(*args: Any) -> Any:
        torch.manual_seed(TRAIN_MODE_SEED)
        return target(*args)

    return seeded


def _construct(cls: Any, call: Call, name: str) -> torch.nn.Module:
    _check_parameter_names(cls, call.init_kwargs, name)
    if call.seed is not None:
        torch.manual_seed(call.seed)
    module = cls(**call.init_kwargs)
    if not isinstance(module, torch.nn.Module):
        raise ContractError(f"`{name}(...)` made a {type(module).__name__}, not an nn.Module")
    if call.parameters:
        load_parameters(module, call.parameters, strict=call.strict_parameters)
    module.train(call.train)
    return module


def _check_parameter_names(cls: Any, init_kwargs: Mapping[str, object], name: str) -> None:
    """The statement fixes the constructor's parameter names, as it fixes the class's: the grader
    passes its arguments by those names, and a constructor that calls one otherwise is refused
    with the name it has instead (not called positionally: an order guessed could be wrong)."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # no signature to read: the call itself will say
        return
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return
    named = [
        parameter.name
        for parameter in parameters
        if parameter.kind
        in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    missing = [argument for argument in init_kwargs if argument not in named]
    if not missing:
        return
    wanted = ", ".join(f"{argument}=..." for argument in init_kwargs)
    closest = difflib.get_close_matches(missing[0], named, n=1, cutoff=0.6)
    instead = f": did you name it `{closest[0]}`?" if closest else ""
    raise ContractError(
        f"the grader calls `{name}({wanted})`, by the names the statement gives, and your "
        f"`__init__` has no parameter `{missing[0]}`{instead}"
    )


def load_parameters(
    module: torch.nn.Module, parameters: dict[str, np.ndarray], *, strict: bool
) -> None:
    """Copy `parameters` into the module's own parameters, matched by name.

    Strict: the names must be exactly the module's parameters, with the same shapes. Otherwise a
    name matches each parameter whose dotted name ends with it and whose shape agrees.
    """
    own = dict(module.named_parameters())
    if strict:
        _check_parameter_layout(own, parameters)
        targets = [(own[name], value) for name, value in parameters.items()]
    else:
        targets = [
            (tensor, value)
            for own_name, tensor in own.items()
            for name, value in parameters.items()
            if (own_name == name or own_name.endswith("." + name))
            and tuple(tensor.shape) == value.shape
        ]
    with torch.no_grad():
        for tensor, value in targets:
            tensor.copy_(torch.from_numpy(value))


def _check_parameter_layout(own: dict[str, torch.nn.Parameter], wanted: dict[str, Any]) -> None:
    missing = sorted(set(wanted) - set(own))
    unexpected = sorted(set(own) - set(wanted))
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"{MISSING_PARAMETERS} {', '.join(missing)}")
        if unexpected:
            parts.append(f"{UNEXPECTED_PARAMETERS} {', '.join(unexpected)}")
        raise ContractError(
            "the grader loads its weights by name, as the statement lays them out: "
            + "; ".join(parts)
        )
    for name, value in wanted.items():
        if tuple(own[name].shape) != value.shape:
            raise ContractError(
                f"parameter {name} has shape {tuple(own[name].shape)}, {SHAPE_ASKED} {value.shape}"
            )


def _as_framework_values(args: Inputs, framework: str) -> list[Any]:
    """Fresh copies of the inputs, one per distinct array: an argument passed several times (the
    same tensor as query, key and value) stays one object, as it would be in a notebook.
    Scalars and None are passed as they are."""
    converted: dict[int, Any] = {}
    values: list[Any] = []
    for array in args:
        if not isinstance(array, np.ndarray):
            values.append(array)
            continue
        if id(array) not in converted:
            copy = np.array(array, copy=True)
            converted[id(array)] = copy if framework == "numpy" else torch.from_numpy(copy)
        values.append(converted[id(array)])
    return values


def describe_result(
    result: Any, names: tuple[str, ...], max_elements: int
) -> tuple[OutputValue, ...]:
    """Split a returned value into the named outputs (a tuple or list in their order, or a dict
    by their names) and describe each one; a value that does not split is described whole.
    Nothing, for a call whose outputs are not compared."""
    if not names:
        return ()
    if type(result) is dict and _keyed_by(result, names):
        return tuple(describe_value(result[name], max_elements) for name in names)
    if len(names) > 1 and type(result) in (tuple, list) and len(result) == len(names):
        return tuple(describe_value(item, max_elements) for item in result)
    return (describe_value(result, max_elements),)


def _keyed_by(result: dict[Any, Any], names: tuple[str, ...]) -> bool:
    return (
        len(result) == len(names)
        and all(type(key) is str for key in result)
        and (set(result) == set(names))
    )


def describe_value(value: Any, max_elements: int) -> OutputValue:
    """An array for a plain tensor or ndarray of bounded size, else a description.

    Exact types only: a subclass could lie about its contents or its equality. The element count
    is checked before anything is copied: a zero-stride `expand` view costs nothing until then.
    """
    kind = type(value)
    if kind is torch.Tensor:
        shape = tuple(int(size) for size in value.shape)
        if value.numel() > max_elements or value.dtype not in _TRANSFERABLE_TORCH_DTYPES:
            return OutputValue("Tensor", dtype=str(value.dtype), shape=shape)
        array = value.detach().cpu().contiguous().numpy().copy()
        return OutputValue("Tensor", array=array, dtype=str(value.dtype), shape=shape)
    if kind is np.ndarray:
        shape = tuple(int(size) for size in value.shape)
        if value.size > max_elements or value.dtype.kind not in "fiub":
            return OutputValue("ndarray", dtype=str(value.dtype), shape=shape)
        return OutputValue(
            "ndarray", array=np.array(value, copy=True), dtype=str(value.dtype), shape=shape
        )
    return OutputValue(_summarise_type(value))


def _summarise_type(value: Any) -> str:
    kind = type(value)
    if kind in (tuple, list) and len(value) <= 64:
        inner = sorted({type(item).__name__ for item in value})
        return f"{kind.__name__} of {len(value)} {'/'.join(inner) or 'items'}"
    return str(kind.__name__)[:80]


def describe_exception(exc: BaseException) -> RaisedError:
    """The exception's type, message and the line of the submission it came from."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == SUBMISSION_FILENAME:
            line = lineno
    message = _safe_str(exc)
    return RaisedError(
        type_name=type(exc).__name__[:80],
        message=message[:2000],
        line=line,
        contract=isinstance(exc, ContractError),
    )


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a hostile __str__ must not break the report
        return "<unprintable exception>"
