"""Wire schemas of exercises: what a student may see. Hidden tests contribute only a count."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from app.courses.budgets import Budget, Standing
from app.courses.due_dates import DueDate, DueSource
from app.courses.models import LatePolicy
from grader.input_specs import InputSpec, LiteralValue
from grader.proof_record import draft_reason
from grader.sandbox.policy import importable_modules
from grader.spec import Exercise, Visibility

_SUMMARY_EXAMPLE: JsonDict = {
    "slug": "multi-headed-self-attention",
    "title": "Multi-Headed Self-Attention",
    "summary": "Run several causal self-attention heads side by side...",
    "kind": "module",
    "framework": "torch",
    "max_score": 10.0,
    "version": "f31f15238d73",
    "draft": None,
}


class ExerciseSummary(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_SUMMARY_EXAMPLE]})

    slug: str
    title: str
    summary: str
    kind: str
    framework: str
    max_score: float
    # A hash of the exercise's folder and reference module: a report graded with this version
    # carries it as `exercise_version`.
    version: str
    draft: str | None = Field(
        description="null once published; for a draft (not proven at this version, so seen by "
        "staff alone), why it is one and what publishes it"
    )

    @classmethod
    def of(cls, exercise: Exercise) -> ExerciseSummary:
        spec = exercise.spec
        return cls(
            slug=spec.slug,
            title=spec.title,
            summary=spec.summary,
            kind=spec.kind.value,
            framework=spec.framework.value,
            max_score=spec.max_score,
            version=exercise.version,
            draft=draft_reason(exercise),
        )


class InputSignature(BaseModel):
    """One argument of a visible test, as exercise.toml writes it (docs/exercises.md): a random
    tensor's shape, a causal mask, a repeat, integers, a keep mask, or a literal value."""

    shape: list[int] | None = None
    dtype: str | None = None
    dist: str | None = None
    scale: float | None = None
    causal_mask: int | None = None
    same_as: int | None = None
    integers: list[int] | None = None
    high: int | None = None
    low: int | None = None
    ignore_index: int | None = None
    ignored: float | None = None
    keep_prefix: list[int] | None = None
    literal: LiteralValue | None = None


class StepSignature(BaseModel):
    """One call of a visible test's sequence on one instance."""

    method: str
    inputs: list[InputSignature]


class TestSignature(BaseModel):
    __test__ = False  # a wire schema, not a pytest test class

    name: str
    points: float
    init: dict[str, int | float | bool]
    inputs: list[InputSignature]
    # Several calls on one instance instead of `inputs`; empty for a single call.
    steps: list[StepSignature] = Field(default_factory=list)
    mode: str = "eval"
    decimals: int | None = None
    entry: str | None = None


class ExercisePublic(ExerciseSummary):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **_SUMMARY_EXAMPLE,
                    "entry_point": "MultiHeadedSelfAttention",
                    "outputs": ["output"],
                    "allowed_imports": ["math", "torch", "torch.nn", "torchtyping", "typing"],
                    "forbidden": ["torch.nn.MultiheadAttention"],
                    "statement": "# Multi-Headed Self-Attention\n...",
                    "starter": "class MultiHeadedSelfAttention(nn.Module):\n    ...\n",
                    "visible_tests": [
                        {
                            "name": "batch 1, 2 heads",
                            "points": 1.0,
                            "init": {"embedding_dim": 8, "attention_dim": 8, "num_heads": 2},
                            "inputs": [{"shape": [1, 4, 8], "dtype": "float32", "dist": "randn"}],
                        }
                    ],
                    "hidden_test_count": 5,
                }
            ]
        }
    )

    entry_point: str
    outputs: list[str]
    allowed_imports: list[str]  # every module a submission may import, submodules included
    forbidden: list[str]
    statement: str
    starter: str
    visible_tests: list[TestSignature]
    hidden_test_count: int

    @classmethod
    def of(cls, exercise: Exercise) -> ExercisePublic:
        spec = exercise.spec
        visible = [test for test in spec.tests if test.visibility is Visibility.VISIBLE]
        return cls(
            **ExerciseSummary.of(exercise).model_dump(),
            entry_point=spec.entry_point,
            outputs=list(spec.outputs),
            allowed_imports=sorted(importable_modules(spec.allowed_imports)),
            forbidden=list(spec.forbidden),
            statement=exercise.statement,
            starter=exercise.starter,
            visible_tests=[
                TestSignature(
                    name=test.name,
                    points=test.points,
                    init=dict(test.init),
                    inputs=_signatures(test.inputs),
                    steps=[
                        StepSignature(method=step.method, inputs=_signatures(step.inputs))
                        for step in test.steps
                    ],
                    mode=test.mode.value,
                    decimals=test.decimals,
                    entry=test.entry,
                )
                for test in visible
            ],
            hidden_test_count=len(spec.tests) - len(visible),
        )


def _signatures(inputs: list[InputSpec]) -> list[InputSignature]:
    return [InputSignature.model_validate(spec.model_dump()) for spec in inputs]


class AttemptBudget(BaseModel):
    """Where a student stands in the exercise's attempt budget (app.courses.budgets)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "limited": True,
                    "attempts": 5,
                    "window_s": 3600,
                    "remaining": 2,
                    "next_at": "2026-11-24T14:05:00Z",
                }
            ]
        }
    )

    limited: bool = Field(description="whether the exercise has an attempt budget in the course")
    attempts: int | None = Field(default=None, description="attempts per window")
    window_s: int | None = Field(default=None, description="the window, in seconds")
    remaining: int | None = Field(default=None, description="attempts the student may use now")
    next_at: datetime | None = Field(
        default=None, description="when the next attempt comes back; null while all are there"
    )

    @classmethod
    def of(cls, found: tuple[Budget, Standing] | None) -> AttemptBudget:
        if found is None:
            return cls(limited=False)
        budget, standing = found
        return cls(
            limited=True,
            attempts=budget.attempts,
            window_s=budget.window_s,
            remaining=standing.remaining,
            next_at=standing.next_at,
        )


class DueDatePublic(BaseModel):
    """A student's due date for the exercise (app.courses.due_dates), and where they stand at
    `now`: the page counts the time left from these two, in the student's time zone."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "due_at": "2026-12-18T23:59:00Z",
                    "source": "lms",
                    "late_policy": "penalty",
                    "penalty_per_day": 10.0,
                    "state": "open",
                    "now": "2026-12-17T09:30:00Z",
                }
            ]
        }
    )

    due_at: datetime | None = Field(description="the due date, UTC; null: none")
    source: DueSource | None = Field(description="the LMS's, the course's or an extension")
    late_policy: LatePolicy = Field(description="what a submission after the due date gets")
    penalty_per_day: float | None = Field(description="percent off per day late, with penalty")
    state: Literal["none", "open", "late", "closed"] = Field(
        description="at `now`: no due date, before it, after it (still taken), after it (refused)"
    )
    now: datetime = Field(description="the service's time, UTC")

    @classmethod
    def of(cls, due: DueDate | None, now: datetime) -> DueDatePublic:
        if due is None:
            return cls(
                due_at=None,
                source=None,
                late_policy=LatePolicy.ACCEPT,
                penalty_per_day=None,
                state="none",
                now=now,
            )
        state: Literal["open", "late", "closed"] = "open"
        if due.closed(now):
            state = "closed"
        elif now > due.due_at:
            state = "late"
        return cls(
            due_at=due.due_at,
            source=due.source,
            late_policy=due.late_policy,
            penalty_per_day=due.penalty_per_day,
            state=state,
            now=now,
        )
