"""The wire schema of a course's concept figures (app.staff.concept_stats): per knowledge
component (grader.concepts), how many students still hold a mistake about it, week by week and
now. Words as in app.staff.schemas; a student *holds* a concept's mistake when their latest
scored submission to some exercise has a finding about that concept."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_EXAMPLE: dict[str, Any] = {
    "course": "ml-101",
    "weeks": [
        {"start": "2026-09-07", "students": 412},
        {"start": "2026-09-14", "students": 874},
    ],
    "students": 911,
    "concepts": [
        {
            "concept": "masking",
            "description": "masks: which positions may attend, and how a mask is applied",
            "weekly": [96, 71],
            "students": 58,
            "exercises": {"scaled-dot-product-attention": 31, "pre-norm-transformer-block": 29},
        }
    ],
}


class ConceptWeek(BaseModel):
    start: date = Field(description="the week's Monday, in UTC")
    students: int = Field(
        description="students with a scored submission by the week's end (or by now)"
    )


class ConceptCurve(BaseModel):
    concept: str
    description: str = Field(description="what a student who holds it has not yet understood")
    weekly: list[int] = Field(
        description="per week, as `weeks`: the students who hold it as of the week's end"
    )
    students: int = Field(description="the students who hold it now")
    exercises: dict[str, int] = Field(
        description="by exercise slug: the students whose latest submission to it holds it now"
    )


class CourseConcepts(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    course: str
    weeks: list[ConceptWeek] = Field(
        description="from the week of the course's first scored submission to this one"
    )
    students: int = Field(description="students with a scored submission now")
    concepts: list[ConceptCurve] = Field(
        description="every concept of the vocabulary (and any other a report names), most "
        "students now first"
    )
