"""The known mistakes of a plan (`grader.plan.KnownMistake`): the reference's variants, and
pairs of them made together, run on the visible tests once, when the plan is built.

Two variants pair where each changes a different step of the reference, written either way:
- classes that subclass the reference and override different parts: the class that derives
  from both (multiple inheritance) makes both mistakes; where both replace one part with a
  class of their own (a head), the part is derived from both the same way;
- instances of one NamedTuple whose fields are the reference's steps, its defaults the
  reference's (a function exercise's variants, `__call__` being the entry): the instance
  with both changed fields.
Two variants of one mistake (one code) don't pair, nor do two that change the same step (the
pair would be one of its parts), nor plain functions. A pair is kept only where it computes
something on some visible test that neither part alone nor the reference computes on all of
them: anything else would claim two mistakes where one, or none, explains the output.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from grader.compare import agree
from grader.contract import Call, Job, OutputValue
from grader.mistake_properties import broken_properties
from grader.plan import KnownMistake, TestPlan, make_job
from grader.reference import run_trusted
from grader.spec import Exercise, Property
from grader.variants import WrongVariant

Outputs = dict[str, tuple[OutputValue, ...] | None]


def known_mistakes(
    exercise: Exercise, variants: tuple[WrongVariant, ...], tests: list[TestPlan]
) -> tuple[KnownMistake, ...]:
    singles = [(each, _outputs(exercise, each.entry, each.of, tests)) for each in variants]
    mistakes = [
        KnownMistake(
            each.code,
            each.message,
            outputs,
            _breaks(exercise, each.entry, outputs, tests),
            each.concepts,
        )
        for each, outputs in singles
    ]
    reference = {test.spec.name: test.expected for test in tests if test.visible}
    for (first, first_outputs), (second, second_outputs) in _pairable(singles):
        entry = _derived(first, second)
        outputs = {} if entry is None else _outputs(exercise, entry, first.of, tests)
        if not _new(outputs, (first_outputs, second_outputs, reference)):
            continue
        mistakes.append(
            KnownMistake(
                first.code,
                first.message,
                outputs,
                _breaks(exercise, entry, outputs, tests),
                first.concepts,
                partner=(second.code, second.message),
            )
        )
    return tuple(mistakes)


def _pairable(
    singles: list[tuple[WrongVariant, Outputs]],
) -> Iterator[tuple[tuple[WrongVariant, Outputs], tuple[WrongVariant, Outputs]]]:
    for first, second in itertools.combinations(singles, 2):
        if first[0].code != second[0].code and first[0].of == second[0].of:
            yield first, second


def _derived(first: WrongVariant, second: WrongVariant) -> object | None:
    """The entry that makes both variants' mistakes, or None where they don't compose."""
    one, other = first.entry, second.entry
    if isinstance(one, type) and isinstance(other, type):
        return _derived_class(one, other)
    if type(one) is type(other) and hasattr(one, "_replace"):  # a NamedTuple of steps
        return _combined_steps(one, other)
    return None


def _derived_class(one: type, other: type) -> type | None:
    """The class deriving from both, its parts derived the same way where both change one part
    with a class of their own (two heads, each with one mistake, make one head with both)."""
    if issubclass(one, other) or issubclass(other, one):
        return None
    parts: dict[str, type] = {}
    for name in _overridden(one, other) & _overridden(other, one):
        first, second = getattr(one, name), getattr(other, name)
        part = (
            _derived_class(first, second)
            if isinstance(first, type) and isinstance(second, type)
            else None
        )
        if part is None:  # both change one step: the pair would be one of them
            return None
        parts[name] = part
    try:
        return type(f"{one.__name__}And{other.__name__}", (one, other), parts)
    except TypeError:  # no consistent method order, or two incompatible layouts
        return None


def _overridden(cls: type, other: type) -> set[str]:
    """The names `cls` defines, or inherits from a class `other` does not derive from."""
    return {
        name
        for base in cls.__mro__
        if base not in other.__mro__
        for name in vars(base)
        if not name.startswith("__")
    }


def _combined_steps(one: Any, other: Any) -> object | None:
    """Both step-by-step entries' changed steps, where they change different ones."""
    reference = type(one)()  # every step as the reference takes it
    changed = [_changed(entry, reference) for entry in (one, other)]
    if changed[0].keys() & changed[1].keys():
        return None
    combined: object = one._replace(**changed[1])
    return combined


def _changed(entry: Any, reference: Any) -> dict[str, object]:
    steps: dict[str, object] = entry._asdict()
    return {name: value for name, value in steps.items() if value != getattr(reference, name)}


def _new(outputs: Outputs, known: tuple[Mapping[str, tuple[OutputValue, ...] | None], ...]) -> bool:
    """Whether a pair computes something on some visible test: neither part alone, nor the
    reference, computes it everywhere."""
    ran = any(value is not None for value in outputs.values())
    return ran and not any(_same(outputs, other) for other in known)


def _same(outputs: Outputs, other: Mapping[str, tuple[OutputValue, ...] | None]) -> bool:
    """Whether two known mistakes' outputs (or the reference's) agree on every visible test."""
    return all(_agree(outputs[name], other.get(name)) for name in outputs)


def _agree(first: tuple[OutputValue, ...] | None, second: tuple[OutputValue, ...] | None) -> bool:
    if first is None or second is None:
        return first is second
    return len(first) == len(second) and all(
        one.array is not None and two.array is not None and agree(one.array, two.array)
        for one, two in zip(first, second, strict=True)
    )


def _outputs(exercise: Exercise, entry: object, of: str | None, tests: list[TestPlan]) -> Outputs:
    """The entry run on each visible test of its entry point: diagnosis judges visible tests
    only."""
    spec = exercise.spec
    return {
        test.spec.name: _try_run(entry, test.call, make_job(spec, "", (test.call,)))
        for test in tests
        if test.visible and test.spec.entry == of
    }


def _breaks(
    exercise: Exercise, entry: object, outputs: Outputs, tests: list[TestPlan]
) -> tuple[Property, ...]:
    """The exercise's properties the entry breaks by itself, judged on the property probes."""
    spec = exercise.spec
    return broken_properties(
        spec.properties,
        tests,
        outputs,
        lambda call: _try_run(entry, call, make_job(spec, "", (call,))),
    )


def _try_run(entry: object, call: Call, job: Job) -> tuple[OutputValue, ...] | None:
    try:
        return run_trusted(entry, call, job)[0]
    except Exception:
        return None
