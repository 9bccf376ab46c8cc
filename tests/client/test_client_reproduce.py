"""`Result.reproduce`: the notebook's way to the code that runs a visible test as the grader
does, from a report the grader really judged."""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest
from autograder_client import Result

from grader.catalog import Catalog
from grader.contract import CallOutcome, Execution, Termination
from grader.hidden_verdicts import HiddenRun
from grader.judge import judge
from grader.plan import ExercisePlan
from grader.plan_building import build_plan
from grader.settings import GraderSettings

FAILING = "16 heads"


@cache
def plan() -> ExercisePlan:
    catalog = Catalog.from_folder(GraderSettings().exercises_dir)
    return build_plan(catalog.get("multi-headed-self-attention"), secret="client")


def result() -> Result:
    """A graded submission whose visible test FAILING alone is wrong."""
    outcomes = {}
    for test in plan().tests:
        outputs = test.expected
        if test.spec.name == FAILING:
            array = outputs[0].array
            assert array is not None
            outputs = (dataclasses.replace(outputs[0], array=array + 1),)
        outcomes[test.call.id] = CallOutcome(test.call.id, outputs)
    execution = Execution(Termination.COMPLETED, outcomes)
    draw = {test.spec.name: test.cases[0] for test in plan().tests if not test.visible}
    report = judge(plan(), execution, HiddenRun(draw, execution))
    return Result({"id": "1", "status": "done", "report": report.model_dump(mode="json")})


def snippet(name: str) -> str | None:
    return next(test.reproduce for test in plan().tests if test.spec.name == name)


def test_a_named_visible_test_s_code_shows_as_code() -> None:
    code = result().reproduce("batch 1, 2 heads")
    assert code == snippet("batch 1, 2 heads")
    assert repr(code) == code  # a notebook shows the code, not a quoted string


def test_without_a_name_every_failing_visible_test_s_code() -> None:
    assert result().reproduce() == snippet(FAILING)


@pytest.mark.parametrize("name", ["one head", "no such test"])
def test_a_hidden_or_unknown_test_has_none(name: str) -> None:
    with pytest.raises(ValueError, match="is not a visible test"):
        result().reproduce(name)
