"""The seed exercise's plan, built once for the judging tests (no sandbox)."""

from __future__ import annotations

from functools import cache

from grader.catalog import Catalog
from grader.plan import ExercisePlan, TestPlan
from grader.plan_building import build_plan
from grader.settings import GraderSettings

SLUG = "multi-headed-self-attention"


@cache
def plan() -> ExercisePlan:
    catalog = Catalog.from_folder(GraderSettings().exercises_dir)
    return build_plan(catalog.get(SLUG), secret="test-secret")


def visible() -> list[TestPlan]:
    return [test for test in plan().tests if test.visible]
