"""A visible test as Python a student can run at home (`TestResult.reproduce`): the inputs drawn
as the grader draws them (`grader.inputs`), then the module built, its weights loaded, its mode
set and each call made as the sandbox makes them (`grader.call_execution`), every output printed.

Written once per plan (`grader.plan_building`), from the test's spec and its call, with the
argument names of the reference's signature. Never for a hidden test: its seed is the
deployment's secret, and a hidden test tells one bit.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from dataclasses import dataclass

from grader.call_execution import TRAIN_MODE_SEED
from grader.contract import FORWARD, Call
from grader.input_specs import IntegerTensor, KeepPrefix, RandomTensor
from grader.inputs import INPUTS_STREAM, POOL_WORDS, WEIGHTS_STREAM
from grader.reproduce_inputs import RNG, write_inputs
from grader.spec import EntryKind, ExerciseSpec, Framework, StepSpec, TestCaseSpec, Visibility

# The module the student's file is imported from.
SOLUTION_MODULE = "solution"
# Names the snippet itself uses, which an argument must not take.
_SNIPPET_NAMES = frozenset(
    {"np", "torch", "math", "generator", "model", "weights", "parameters", "parameter", "name"}
    | {"bound", "ignored", "lengths", RNG}
)
_INDENT = "    "
_WIDTH = 88  # of a line of the loop over the weights' names, indented under `with`


@dataclass(frozen=True)
class _Test:
    """A visible test's call, on the reference's entry point (whose signature names the
    arguments)."""

    spec: ExerciseSpec
    test: TestCaseSpec
    seed: int
    call: Call
    entry: object

    @property
    def name(self) -> str:
        return self.test.entry or self.spec.entry_point

    @property
    def module(self) -> bool:
        return self.spec.entry_kind(self.test) is EntryKind.MODULE

    @property
    def torch(self) -> bool:
        return self.spec.framework is Framework.TORCH

    @property
    def draws(self) -> bool:
        drawn = (RandomTensor, IntegerTensor, KeepPrefix)
        return any(isinstance(spec, drawn) for step in self.test.calls for spec in step.inputs)


def reproduce_snippet(
    spec: ExerciseSpec, test: TestCaseSpec, call: Call, entry: object
) -> str | None:
    """The snippet of a visible test whose call is `call`, on the reference's `entry`; None for
    a hidden test."""
    if test.visibility is Visibility.HIDDEN or test.seed is None:
        return None
    shown = _Test(spec, test, test.seed, call, entry)
    body = ["", *_construction(shown)] if shown.module else []
    if shown.draws:
        body += ["", f"{RNG} = generator({test.seed}, {INPUTS_STREAM})"]
    for number, step in enumerate(test.calls, start=1):
        lines = _step(shown, step, number)
        # A sequence's steps apart; one call right under the generator it draws from.
        body += lines if shown.draws and not test.steps else ["", *lines]
    return "\n".join(_header(shown, body)) + "\n"


def _header(shown: _Test, body: list[str]) -> list[str]:
    text = "\n".join(body)
    weights = "weights" in text
    imports = [
        *(["import math"] if weights else []),
        *(["import numpy as np"] if "np." in text or "generator(" in text else []),
        *(["import torch"] if shown.torch else []),
    ]
    title = " ".join(shown.test.name.split())
    return [
        f'# The visible test "{title}" of {shown.spec.slug}, as the grader runs it.',
        f"# Save your code as {SOLUTION_MODULE}.py beside this file: it is imported from there.",
        *imports,
        "",
        f"from {SOLUTION_MODULE} import {shown.name}",
        *(_generator(weights) if "generator(" in text else []),
        *body,
    ]


def _generator(weights: bool) -> list[str]:
    streams = f"stream {INPUTS_STREAM} draws the inputs"
    if weights:
        streams += f", stream {WEIGHTS_STREAM} the weights"
    return [
        "",
        "",
        "def generator(seed, stream):",
        f'{_INDENT}"""The grader\'s random numbers: NumPy\'s PCG64 keyed by every bit of the seed;',
        f'{_INDENT}{streams}."""',
        f"{_INDENT}sequence = np.random.SeedSequence(seed, spawn_key=(stream,), "
        f"pool_size={POOL_WORDS})",
        f"{_INDENT}return np.random.Generator(np.random.PCG64(sequence))",
        "",  # the body's own blank line makes the two after a function
    ]


def _construction(shown: _Test) -> list[str]:
    """The module as the grader builds it: seeded, constructed, its weights loaded and its mode
    set, all without grad."""
    call = shown.call
    arguments = ", ".join(f"{key}={value!r}" for key, value in call.init_kwargs.items())
    lines = []
    if call.seed is not None:
        lines.append(f"torch.manual_seed({call.seed})  # the grader's, before your constructor")
    lines += ["with torch.no_grad():", f"{_INDENT}model = {shown.name}({arguments})"]
    if call.parameters:
        lines += _indented(_weights(list(call.parameters), shown.seed))
    lines.append(f"{_INDENT}model.{'train' if call.train else 'eval'}()")
    return lines


def _weights(names: list[str], seed: int) -> list[str]:
    listed = ", ".join(json.dumps(name) for name in names)
    loop = f"for name in [{listed}]:"
    if len(loop) > _WIDTH:  # a deep model has many: a few to a line
        wrapped = textwrap.wrap(listed, _WIDTH, break_long_words=False, break_on_hyphens=False)
        loop = "\n".join(["for name in [", *_indented(wrapped), "]:"])
    return [
        "# Each weight drawn as the grader draws it, in the reference's order, and loaded by name.",
        f"weights = generator({seed}, {WEIGHTS_STREAM})",
        "parameters = dict(model.named_parameters())",
        *loop.splitlines(),
        f"{_INDENT}parameter = parameters[name]",
        f"{_INDENT}bound = 1 / math.sqrt(parameter.shape[-1])",
        f"{_INDENT}parameter.copy_(torch.from_numpy("
        "weights.uniform(-bound, bound, size=parameter.shape)))",
    ]


def _step(shown: _Test, step: StepSpec, number: int) -> list[str]:
    """One call: its inputs drawn, then the call made as the sandbox makes it (with grad only
    where the method asks for it; in train mode, torch seeded right before) and printed."""
    names = _argument_names(shown, step.method, len(step.inputs))
    written = write_inputs(step.inputs, names, torch=shown.torch)
    target = "model" if shown.module else shown.name
    if step.method != FORWARD:
        target += f".{step.method}"
    result = f"{target}({', '.join(written.arguments)})"
    label = f"step {number} {step.method}" if shown.test.steps else None
    method = shown.spec.methods.get(step.method)
    if label is None:
        printed = f"print({result})"
    elif method is not None and not method.outputs:
        printed = result  # a method whose return value the grader does not compare
    else:
        printed = f'print("{label}:", {result})'
    lines = [f"# {label}"] if label else []
    lines += written.lines
    if shown.call.train:
        lines.append(f"torch.manual_seed({TRAIN_MODE_SEED})  # train mode: seeded before each call")
    if shown.torch and not (method is not None and method.grad):
        return [*lines, "with torch.no_grad():", _INDENT + printed]
    return [*lines, printed]


def _argument_names(shown: _Test, method: str, count: int) -> list[str]:
    """The names the reference's signature gives the call's arguments, else `input_1`...;
    one the snippet uses itself gets a trailing underscore."""
    entry = shown.entry
    function = getattr(entry, method, None) if shown.module or method != FORWARD else entry
    try:
        parameters = list(inspect.signature(function).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        parameters = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = [p.name for p in parameters if p.kind in positional][1 if shown.module else 0 :]
    names = [named[i] if i < len(named) else f"input_{i + 1}" for i in range(count)]
    taken = _SNIPPET_NAMES | {shown.name}
    return [f"{name}_" if name in taken else name for name in names]


def _indented(lines: list[str]) -> list[str]:
    return [f"{_INDENT}{line}" if line else line for line in lines]
