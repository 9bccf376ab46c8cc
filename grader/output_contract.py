"""What an entry point returns, judged once over the visible tests: None, a value of the wrong
type, or an output of the wrong shape on every visible test it returned from.

Each test's row already says what came back on that test; a finding here says it once, for the
entry point, with what to change, where the same thing happens on every visible test (a mistake
that shows on some tests only is the rows' to tell), or, for a shape, where one relation to the
expected shape holds on all of them (a transpose keeps a square output's shape). Shapes are said
in the tests' own terms (`grader.shape_relation`). Visible tests only: nothing here reads a
hidden test's shape or outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from enum import Enum

from grader.contract import CallOutcome, OutputValue
from grader.plan import ExercisePlan, TestPlan
from grader.report import Finding
from grader.shape_relation import ShapePair, shape_relation
from grader.spec import EntryKind, ExerciseSpec, TestCaseSpec

RETURNS_NONE = "returns-none"
WRONG_TYPE = "wrong-output-type"
WRONG_SHAPE = "wrong-output-shape"

_WHAT = {"Tensor": "a torch.Tensor", "ndarray": "a numpy.ndarray"}


class _Kind(Enum):
    NONE = RETURNS_NONE
    TYPE = WRONG_TYPE
    SHAPE = WRONG_SHAPE
    FITS = "fits"  # right count, types and shapes: its values are the comparison's to judge


# A visible test and what its call returned.
Returned = tuple[TestPlan, tuple[OutputValue, ...]]


def output_findings(
    plan: ExercisePlan, outcomes: Mapping[str, CallOutcome], explained: Collection[str]
) -> list[Finding]:
    """One finding per entry point that returns None, the wrong type or the wrong shape on
    every visible test it returned from, of those no finding in `explained` names. A test of
    several steps is left to its rows: its outputs are many calls'."""
    spec = plan.exercise.spec
    returned: dict[str, list[Returned]] = {}
    for test in plan.tests:
        outcome = outcomes.get(test.call.id)
        if not test.visible or test.spec.steps or test.spec.name in explained:
            continue
        if outcome is not None and outcome.outputs is not None:
            returned.setdefault(_callee(spec, test.spec), []).append((test, outcome.outputs))
    found = (_finding(callee, calls) for callee, calls in returned.items())
    return [finding for finding in found if finding is not None]


def _callee(spec: ExerciseSpec, test: TestCaseSpec) -> str:
    """What the student wrote that the test calls, as they would name it."""
    entry = test.entry or spec.entry_point
    return f"{entry}.forward" if spec.entry_kind(test) is EntryKind.MODULE else entry


def _finding(callee: str, calls: list[Returned]) -> Finding | None:
    kinds = [_kind(test, outputs) for test, outputs in calls]
    if set(kinds) <= {_Kind.SHAPE, _Kind.FITS} and _Kind.SHAPE in kinds:
        kind = _Kind.SHAPE
    elif len(set(kinds)) == 1 and kinds[0] is not _Kind.FITS:
        kind = kinds[0]
    else:
        return None
    message = _DESCRIBE[kind](callee, calls)
    tests = [test.spec.name for (test, _), shown in zip(calls, kinds, strict=True) if shown is kind]
    return None if message is None else Finding(code=kind.value, message=message, tests=tests)


def _kind(test: TestPlan, outputs: tuple[OutputValue, ...]) -> _Kind:
    if len(outputs) == 1 and outputs[0].type_name == "NoneType":
        return _Kind.NONE
    if _wrong_type(test, outputs) is not None:
        return _Kind.TYPE
    if _wrong_shape(test, outputs) is not None:
        return _Kind.SHAPE
    return _Kind.FITS


def _wrong_type(test: TestPlan, outputs: tuple[OutputValue, ...]) -> tuple[str, str] | None:
    """What was expected and what came, where a value is not of the reference's type (or the
    values are not as many as the reference's)."""
    expected = test.expected
    if len(outputs) != len(expected):
        names = test.output_names
        wanted = f"a tuple ({', '.join(names)})" if len(names) > 1 else _a(expected[0].type_name)
        return wanted, _a(outputs[0].type_name) if outputs else "nothing"
    return next(
        (
            (_a(want.type_name), _a(got.type_name))
            for got, want in zip(outputs, expected, strict=True)
            if got.type_name != want.type_name
        ),
        None,
    )


def _wrong_shape(test: TestPlan, outputs: tuple[OutputValue, ...]) -> int | None:
    """The index of the first output whose shape is not the reference's."""
    pairs = enumerate(zip(outputs, test.expected, strict=True))
    return next((index for index, (got, want) in pairs if got.shape != want.shape), None)


def _returns_none(callee: str, calls: list[Returned]) -> str:
    return (
        f"`{callee}` returns None on every visible test: does it still end in `pass`, or miss "
        "a `return`?"
    )


def _returns_wrong_type(callee: str, calls: list[Returned]) -> str:
    wrong = [found for test, outputs in calls if (found := _wrong_type(test, outputs))]
    wanted, got = wrong[0]
    if len({got for _, got in wrong}) > 1:  # a list of 2 heads on one test, of 8 on another
        got = _kind_of(got)
    advice = _type_advice(wanted, got)
    return f"`{callee}` returns {got} where {wanted} is expected{': ' + advice if advice else ''}."


def _kind_of(got: str) -> str:
    """`a list of 2 Tensor` as `a list`: its length may differ from test to test."""
    return got.split(" of ", 1)[0]


def _type_advice(wanted: str, got: str) -> str:
    if wanted.startswith("a tuple"):
        return "return them together, as `return " + wanted[len("a tuple (") : -1] + "`"
    if got.startswith(("a list", "a tuple")) and wanted == _WHAT["Tensor"]:
        return "join them into one tensor (`torch.cat` or `torch.stack`)"
    if got.startswith(("a list", "a tuple")) and wanted == _WHAT["ndarray"]:
        return "join them into one array (`np.concatenate` or `np.stack`)"
    if wanted == _WHAT["Tensor"] and got == _WHAT["ndarray"]:
        return "keep the computation in torch (`.numpy()` and numpy functions leave it)"
    if wanted == _WHAT["ndarray"] and got == _WHAT["Tensor"]:
        return "the exercise is in numpy: compute with numpy arrays"
    return ""


def _a(type_name: str) -> str:
    if type_name in _WHAT:
        return _WHAT[type_name]
    return f"{'an' if type_name[:1] in 'aeiou' else 'a'} {type_name}"


def _returns_wrong_shape(callee: str, calls: list[Returned]) -> str | None:
    """The shape the output has in the tests' terms, where it is wrong on every test, or where
    it is wrong on some and one relation names it on all (a transpose keeps a square's shape)."""
    wrong = [(test, outputs) for test, outputs in calls if _wrong_shape(test, outputs) is not None]
    first, outputs = wrong[0]
    index = _wrong_shape(first, outputs)
    assert index is not None
    shapes = [
        ShapePair(test.spec.init, returned[index].shape or (), test.expected[index].shape or ())
        for test, returned in calls
    ]
    relation = shape_relation(shapes, named_only=len(wrong) < len(calls))
    if relation is None:
        return None
    got, want = (
        _shape(shape) for shape in (outputs[index].shape or (), first.expected[index].shape or ())
    )
    name, example = first.output_names[index], f"{got} where {want} is expected"
    return (
        f"`{callee}` returns `{name}` of the wrong shape: {relation} (in test "
        f"{first.spec.name!r}: {example})."
    )


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(size) for size in shape) + ")"


_DESCRIBE: dict[_Kind, Callable[[str, list[Returned]], str | None]] = {
    _Kind.NONE: _returns_none,
    _Kind.TYPE: _returns_wrong_type,
    _Kind.SHAPE: _returns_wrong_shape,
}
