"""A failed report's behaviour: each fact on synthetic arrays, then the key over whole reports
judged from hand-built executions (no sandbox)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from grader_support import plan
from test_judge import every_call_passing, first_sets

from grader.contract import CallOutcome, Execution, OutputValue, RaisedError, Termination
from grader.hidden_verdicts import HiddenRun
from grader.judge import judge
from grader.output_facts import TOO_LARGE, output_facts, value_facts
from grader.plan import TestPlan
from grader.report import Behaviour, Report

RNG = np.random.default_rng(0)
WANT = RNG.standard_normal((2, 3, 8))
SQUARE = RNG.standard_normal((2, 5, 5))


def facts_of(got: np.ndarray, want: np.ndarray = WANT, heads: int | None = 4) -> list[str]:
    return value_facts(got, want, decimals=4, heads=heads)


def heads_in_order(order: list[int]) -> np.ndarray:
    return WANT.reshape(2, 3, 4, 2)[:, :, order, :].reshape(WANT.shape)


def with_region(array: np.ndarray, region: Any) -> np.ndarray:
    changed = array.copy()
    changed[region] += 1.0
    return changed


@pytest.mark.parametrize(
    ("got", "fact"),
    [
        (WANT * 0.3536, "is the reference's scaled by 0.35"),
        (-WANT, "is the reference's negated"),
        (WANT + 0.25, "is the reference's shifted by 0.25"),
        (np.round(WANT, 2), "is the reference's rounded to 2 decimals"),
        (np.zeros_like(WANT), "is all zeros"),
        (heads_in_order([3, 2, 1, 0]), "has its heads in reverse order"),
        (heads_in_order([1, 0, 2, 3]), "has its heads in another order (2, 1, 3, 4)"),
        (WANT[:, ::-1, :], "is the reference's reversed along axis 1"),
        (WANT[:, [1, 2, 0], :], "is the reference's in another order along axis 1"),
        (RNG.standard_normal(WANT.shape), "differs everywhere"),
    ],
)
def test_a_relation_to_the_reference_is_the_one_fact(got: np.ndarray, fact: str) -> None:
    assert facts_of(got) == [fact]


def test_square_values_transposed_are_told() -> None:
    assert facts_of(np.swapaxes(SQUARE, -1, -2), SQUARE) == [
        "is the reference's with its last two axes transposed"
    ]


@pytest.mark.parametrize(
    ("region", "fact"),
    [
        ((..., slice(2, None)), "only heads 2-4 of 4 differ"),
        ((..., slice(0, 2)), "only heads 1 of 4 differ"),
        ((slice(None), -1, slice(None)), "differs only at the last index of axis 1"),
        ((slice(None), 0, slice(None)), "differs only at the first index of axis 1"),
        ((slice(None), slice(0, 2), slice(None)), "matches only at the last index of axis 1"),
    ],
)
def test_a_region_that_alone_differs_is_told(region: tuple[object, ...], fact: str) -> None:
    facts = facts_of(with_region(WANT, region))
    assert any(told.startswith(fact) for told in facts), facts
    assert "differs everywhere" not in facts


def test_mismatches_above_the_diagonal_alone_are_told() -> None:
    above = np.broadcast_to(np.triu(np.ones((5, 5), dtype=bool), k=1), SQUARE.shape)
    assert "differs only above the diagonal" in facts_of(with_region(SQUARE, above), SQUARE)


def test_nan_is_told_and_the_region_it_is_in() -> None:
    got = WANT.copy()
    got[:, -1, :] = np.nan
    assert facts_of(got) == [
        "contains NaN where the reference's has numbers",
        "differs only at the last index of axis 1",
    ]


def tensor(array: np.ndarray) -> OutputValue:
    return OutputValue("Tensor", array, "torch.float32", array.shape)


INIT = {"embedding_dim": 8, "attention_dim": 8, "num_heads": 4}


@pytest.mark.parametrize(
    ("got", "fact"),
    [
        (OutputValue("NoneType"), "returns None"),
        (OutputValue("list of 2 Tensor"), "is a list of 2 Tensor, not a Tensor"),
        (OutputValue("<b>\x1b[31m"), "is a ?b???31m, not a Tensor"),
        (tensor(np.zeros((2, 8, 3))), "has its last two axes transposed"),
        (tensor(np.zeros((2, 3, 32))), "axis 2 is multiplied by num_heads"),
        (tensor(np.zeros((2, 3, 2))), "axis 2 is divided by num_heads"),
        (tensor(np.zeros((2, 3, 0))), "axis 2 has another size"),
        (tensor(np.zeros((1, 2, 3, 8))), "has extra or missing axes of size 1"),
        (tensor(np.zeros((6, 8))), "has 2 axes, not 3"),
    ],
)
def test_what_a_wrong_output_is_told_from_its_description(got: OutputValue, fact: str) -> None:
    assert output_facts(got, tensor(WANT.astype(np.float32)), 4, INIT) == [fact]


def test_heads_are_the_constructor_s() -> None:
    got = tensor(heads_in_order([3, 2, 1, 0]))
    assert output_facts(got, tensor(WANT), 4, INIT) == ["has its heads in reverse order"]
    for init in (INIT | {"num_heads": 2}, {"head_size": 4}, {"n_head": 4}):
        told = output_facts(got, tensor(WANT), 4, init) == ["has its heads in reverse order"]
        assert told is ("n_head" in init)


# Whole reports: the seed exercise's plan, its visible tests' outputs replaced.

Make = Callable[[np.ndarray], np.ndarray]  # an output made of the reference's


def visible_tests() -> list[TestPlan]:
    return [test for test in plan().tests if test.visible]


def hidden_tests() -> list[TestPlan]:
    return [test for test in plan().tests if not test.visible]


def returning(test: TestPlan, make: Make, **extra: object) -> CallOutcome:
    expected = test.expected[0]
    assert expected.array is not None
    wrong = dataclasses.replace(expected, array=make(expected.array).astype(np.float32))
    return CallOutcome(test.call.id, outputs=(wrong,), **extra)  # type: ignore[arg-type]


def judged(
    make: Make,
    hidden: Make | None = None,
    **extra: object,
) -> Report:
    """A report where every visible test returns `make` of the reference's output, and every
    hidden one `hidden` of it (None: the reference's)."""
    outcomes = every_call_passing()
    for test in visible_tests():
        outcomes[test.call.id] = returning(test, make, **extra)
    if hidden is not None:
        outcomes |= {test.call.id: returning(test, hidden) for test in hidden_tests()}
    execution = Execution(Termination.COMPLETED, outcomes)
    return judge(plan(), execution, HiddenRun(first_sets(), execution))


def behaviour_of(report: Report) -> Behaviour:
    assert report.behaviour is not None
    return report.behaviour


def test_two_students_with_one_bug_get_one_key() -> None:
    first = behaviour_of(judged(lambda out: out * 0.5, stdout="mine\n", duration_s=0.1))
    noise = RNG.uniform(-4e-5, 4e-5, 1)[0]  # another way to write it: other last digits
    second = behaviour_of(judged(lambda out: out * 0.5 + noise, stdout="yours\n"))
    assert first.key == second.key
    assert first.facts == second.facts == ["output: is the reference's scaled by 0.5"]
    assert first.failing_tests == [test.spec.name for test in visible_tests()]


def test_different_bugs_get_different_keys() -> None:
    bugs: list[Make] = [
        lambda out: out * 0.5,
        lambda out: out * 0.25,
        lambda out: out + 1,
        lambda out: out[:, ::-1, :],
        lambda out: np.round(out, 1),
    ]
    assert len({behaviour_of(judged(make)).key for make in bugs}) == len(bugs)


def test_a_hidden_test_s_failure_alone_never_changes_the_behaviour() -> None:
    visible_wrong = judged(lambda out: out * 0.5)
    for hidden in (lambda out: out * 0.5, lambda out: out[..., ::-1], lambda out: out + np.nan):
        assert judged(lambda out: out * 0.5, hidden).behaviour == visible_wrong.behaviour


def test_failing_hidden_tests_alone_get_the_behaviour_of_passing_every_visible_one() -> None:
    report = judged(lambda out: out, hidden=lambda out: out * 2)
    assert behaviour_of(report).facts == ["passes every visible test"]
    assert judged(lambda out: out).behaviour is None  # passed: nothing to group


def test_an_excerpt_shows_the_first_mismatch_s_row_beside_the_reference_s() -> None:
    def first_value_off(out: np.ndarray) -> np.ndarray:
        changed = out.copy()
        changed[0, 1, 2] += 1
        return changed

    report = judged(first_value_off)
    [excerpt] = behaviour_of(report).excerpts
    test = visible_tests()[0]
    assert test.expected[0].array is not None
    row = test.expected[0].array[0, 1, :8].tolist()
    assert (excerpt.test, excerpt.output, excerpt.index) == (test.spec.name, "output", [0, 1, 0])
    assert excerpt.expected == pytest.approx(row, abs=1e-6)
    assert excerpt.actual[2] == pytest.approx(row[2] + 1, abs=1e-6)
    assert len(excerpt.actual) <= 8


def test_errors_and_none_are_facts_too() -> None:
    outcomes = every_call_passing()
    first, second = visible_tests()[:2]
    error = RaisedError("Value\x1b[2JError", "my own words", line=3)
    outcomes[first.call.id] = CallOutcome(first.call.id, outputs=None, error=error)
    outcomes[second.call.id] = CallOutcome(second.call.id, outputs=(OutputValue("NoneType"),))
    execution = Execution(Termination.COMPLETED, outcomes)
    behaviour = behaviour_of(judge(plan(), execution, HiddenRun(first_sets(), execution)))
    assert behaviour.facts == ["output: returns None", "raises Value??2JError"]  # inert
    assert behaviour.failing_tests == [first.spec.name, second.spec.name]


def test_values_that_agree_here_and_there_by_chance_still_differ_everywhere() -> None:
    want = RNG.standard_normal((16, 64, 64))
    assert facts_of(RNG.standard_normal(want.shape), want) == ["differs everywhere"]


def test_values_past_the_report_s_budget_are_only_said_to_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = visible_tests()[0].expected[0].array
    assert first is not None
    monkeypatch.setattr("grader.behaviour.VALUES_BUDGET", first.size)
    facts = behaviour_of(judged(lambda out: out * 0.5)).facts
    assert facts == [f"output: {TOO_LARGE}", "output: is the reference's scaled by 0.5"]


def test_a_run_that_stops_before_its_first_test_is_grouped_too() -> None:
    execution = Execution(Termination.TIMEOUT, {}, detail="used up its 10 s of CPU")
    report = judge(plan(), execution, HiddenRun(first_sets(), execution))
    assert behaviour_of(report).facts == ["runs out of time"]
