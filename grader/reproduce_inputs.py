"""How a visible test's snippet (`grader.reproduce`) writes each input: the very draws of
`grader.inputs`, from a generator named `rng`, in the order the grader makes them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.input_specs import (
    CausalMask,
    InputSpec,
    IntegerTensor,
    KeepPrefix,
    LiteralInput,
    RandomTensor,
    SameAs,
)
from grader.inputs import literal

# The name of the test's input generator in a snippet.
RNG = "rng"


@dataclass(frozen=True)
class WrittenInputs:
    """A call's arguments as Python: the lines that make them, and the name of each argument."""

    lines: list[str]
    arguments: list[str]


def write_inputs(specs: list[InputSpec], names: list[str], *, torch: bool) -> WrittenInputs:
    """Each input assigned to its name (the one passed as an earlier argument is that name
    again, as the grader passes one object); tensors for torch, arrays for NumPy."""
    lines: list[str] = []
    arguments: list[str] = []
    for spec, name in zip(specs, names, strict=True):
        if isinstance(spec, SameAs):
            arguments.append(arguments[spec.same_as])
            continue
        *steps, value = _making(spec, name)
        lines += steps
        if torch and not _scalar(spec):
            lines.append(f"{name} = torch.from_numpy({value})")
        elif value != name:
            lines.append(f"{name} = {value}")
        arguments.append(name)
    return WrittenInputs(lines, arguments)


def _scalar(spec: InputSpec) -> bool:
    """A literal number, passed as the Python value it is."""
    return isinstance(spec, LiteralInput) and not isinstance(spec.literal, list)


def _making(spec: InputSpec, name: str) -> list[str]:
    """The lines that draw one input into `name`, the last of them its value's expression."""
    if isinstance(spec, RandomTensor):
        return [_random(spec)]
    if isinstance(spec, IntegerTensor):
        return _integers(spec, name)
    if isinstance(spec, KeepPrefix):
        return _keep_prefix(spec)
    if isinstance(spec, CausalMask):
        size = spec.causal_mask
        return [f"np.triu(np.full(({size}, {size}), -np.inf, dtype=np.{spec.dtype}), k=1)"]
    assert isinstance(spec, LiteralInput), spec
    if _scalar(spec):
        return [repr(spec.literal)]
    values = literal(spec)
    assert isinstance(values, np.ndarray), spec
    return [f"np.array({spec.literal!r}, dtype=np.{values.dtype})"]


def _random(spec: RandomTensor) -> str:
    draw = "standard_normal" if spec.dist == "randn" else "random"
    # float32 is drawn as float32 (another algorithm than float64 rounded down).
    dtype = "" if spec.dtype == "float64" else f", dtype=np.{spec.dtype}"
    values = f"{RNG}.{draw}({spec.shape}{dtype})"
    return values if spec.scale == 1.0 else f"{values} * np.{spec.dtype}({spec.scale!r})"


def _integers(spec: IntegerTensor, name: str) -> list[str]:
    values = f"{RNG}.integers({spec.low}, {spec.high}, size={spec.integers})"
    if spec.ignore_index is None:
        return [values]
    lines = [
        f"{name} = {values}",
        f"ignored = {RNG}.random({name}.size) < {spec.ignored!r}  # the entries a loss skips",
    ]
    if int(np.prod(spec.integers)) > 1:
        lines.append("ignored[0], ignored[-1] = True, False  # one skipped at least, one kept")
    where = "ignored" if len(spec.integers) == 1 else f"ignored.reshape({name}.shape)"
    return [*lines, f"{name}[{where}] = {spec.ignore_index}", name]


def _keep_prefix(spec: KeepPrefix) -> list[str]:
    rows, tokens = spec.keep_prefix
    return [
        f"lengths = {RNG}.integers(1, {tokens + 1}, size={rows})  # each row keeps its first L",
        f"lengths[0] = {tokens}  # the first row keeps all",
        f"np.arange({tokens})[None, :] < lengths[:, None]",
    ]
