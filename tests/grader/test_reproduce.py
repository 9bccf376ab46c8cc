"""A visible test's snippet (`grader.reproduce`) is what the grader runs: executed with the
reference as the student's `solution`, it prints exactly the outputs the plan expects, for every
visible test of every exercise (and of the engine's own course model, which uses every kind of
call); a hidden test never gets one."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from grader.call_execution import describe_result
from grader.catalog import Catalog
from grader.contract import CallOutcome, Execution, OutputValue, Termination, Violation
from grader.hidden_verdicts import HiddenRun
from grader.judge import judge
from grader.plan import ExercisePlan, TestPlan
from grader.plan_building import build_plan
from grader.reproduce import SOLUTION_MODULE, reproduce_snippet
from grader.settings import GraderSettings
from grader.spec import Exercise
from grader.test_calls import step_outputs

COURSE_MODEL = Path(__file__).parent / "course_model" / "exercises"
CATALOGS = (Catalog.from_folder(GraderSettings().exercises_dir), Catalog.from_folder(COURSE_MODEL))
EXERCISES = {slug: catalog for catalog in CATALOGS for slug in catalog.slugs()}


@cache
def plan_of(slug: str) -> ExercisePlan:
    return build_plan(EXERCISES[slug].get(slug), secret="reproduce")


def reference_as_solution(exercise: Exercise) -> ModuleType:
    """The reference, imported under the name a snippet imports the student's file by."""
    found = importlib.util.spec_from_file_location(SOLUTION_MODULE, exercise.reference_file)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def printed_outputs(
    plan: ExercisePlan, test: TestPlan, monkeypatch: pytest.MonkeyPatch
) -> list[OutputValue]:
    """Run the test's snippet with the reference as `solution`; what it prints, described as
    the grader describes a call's result, step by step."""
    assert test.reproduce is not None
    monkeypatch.setitem(sys.modules, SOLUTION_MODULE, reference_as_solution(plan.exercise))
    printed: list[Any] = []
    namespace = {"__name__": "__main__", "print": lambda *values: printed.append(values[-1])}
    exec(compile(test.reproduce, "<reproduce>", "exec"), namespace)
    spec = plan.exercise.spec
    names = [step_outputs(spec, test.spec, step) for step in test.spec.calls]
    outputs = [name for name in names if name or not test.spec.steps]
    assert len(printed) == len(outputs), test.reproduce
    limit = test.call.max_output_elements
    return [
        value
        for result, step_names in zip(printed, outputs, strict=True)
        for value in describe_result(result, step_names, limit)
    ]


@pytest.mark.parametrize("slug", sorted(EXERCISES))
def test_every_visible_snippet_prints_what_the_grader_expects(
    slug: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_of(slug)
    for test in (test for test in plan.tests if test.visible):
        got = printed_outputs(plan, test, monkeypatch)
        assert len(got) == len(test.expected), test.spec.name
        for value, expected in zip(got, test.expected, strict=True):
            assert (value.type_name, value.dtype, value.shape) == (
                expected.type_name,
                expected.dtype,
                expected.shape,
            ), test.spec.name
            np.testing.assert_array_equal(value.array, expected.array, err_msg=test.spec.name)


@pytest.mark.parametrize("slug", sorted(EXERCISES))
def test_only_visible_tests_have_a_snippet(slug: str) -> None:
    plan = plan_of(slug)
    assert {test.spec.name: test.reproduce is not None for test in plan.tests} == {
        test.spec.name: test.visible for test in plan.tests
    }


def test_a_report_gives_each_visible_test_its_snippet_and_no_hidden_test_one() -> None:
    plan = plan_of("multi-headed-self-attention")
    outcomes = {test.call.id: CallOutcome(test.call.id, test.expected) for test in plan.tests}
    execution = Execution(Termination.COMPLETED, outcomes)
    draw = {test.spec.name: test.cases[0] for test in plan.tests if not test.visible}
    report = judge(plan, execution, HiddenRun(draw, execution))
    snippets = {test.name: test.reproduce for test in report.tests}
    assert snippets == {test.spec.name: test.reproduce for test in plan.tests}
    assert any(snippets.values()) and None in snippets.values()


def test_a_refused_submission_s_tests_have_none_since_none_ran() -> None:
    plan = plan_of("multi-headed-self-attention")
    refusal = Execution(Termination.REJECTED, {}, violations=(Violation("no", line=1),))
    assert [test.reproduce for test in judge(plan, refusal).tests] == [None] * len(plan.tests)


def test_an_argument_named_as_the_snippet_s_own_names_is_renamed() -> None:
    class Clashing:
        def forward(self, model: object, rng: object) -> None: ...

    plan = plan_of("course-model")
    test = next(test for test in plan.tests if test.spec.name == "a keep mask")
    code = reproduce_snippet(plan.exercise.spec, test.spec, test.call, Clashing)
    assert code is not None and "print(model(model_, rng_))" in code
    compile(code, "<reproduce>", "exec")
