"""The wire schemas of an exercise's unexplained wrong answers grouped by what they do
(app.staff.clusters), and of the mistakes staff name from a group (app.staff.naming)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.staff import cluster_examples
from grader.concepts import CONCEPTS
from grader.report import OutputExcerpt

CODE_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"


def _known_concept(tag: str) -> str:
    if tag not in CONCEPTS:
        raise ValueError(f"{tag!r} is not a concept (one of {', '.join(CONCEPTS)})")
    return tag


Concept = Annotated[str, AfterValidator(_known_concept)]


class ClusterExample(BaseModel):
    submission_id: str
    student_id: str | None
    source: str = Field(description="the submission's code")
    excerpts: list[OutputExcerpt] = Field(
        description="its output beside the reference's, on visible tests"
    )


class Cluster(BaseModel):
    key: str = Field(description="the behaviour shared by the group; what a name is given to")
    facts: list[str] = Field(description="how the outputs differ from the reference's")
    failing_tests: list[str] = Field(description="visible tests only")
    broken_properties: list[str]
    students: int
    submissions: int
    examples: list[ClusterExample] = Field(description="a few of the group, newest first")


class NamedMistake(BaseModel):
    code: str
    message: str
    fix: str
    concepts: list[str]
    behaviour_key: str
    student_message: str = Field(description="what a student who makes it reads")
    created_at: datetime


class ExerciseClusters(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [cluster_examples.EXERCISE_CLUSTERS]})

    course: str
    exercise: str
    unexplained_students: int = Field(
        description="failing students with a wrong answer no mistake explains"
    )
    clusters: list[Cluster] = Field(
        description="the unexplained wrong answers by behaviour, most students first"
    )
    named: list[NamedMistake] = Field(description="the exercise's mistakes the course named")
    concepts: dict[str, str] = Field(description="the concepts a named mistake may be tagged with")


class NameMistakeBody(BaseModel):
    behaviour_key: str = Field(max_length=200, description="the group's key")
    code: str = Field(
        pattern=CODE_PATTERN, max_length=64, description="short, in kebab case: 'heads-reversed'"
    )
    message: str = Field(
        min_length=1, max_length=2000, description="what is wrong, in the student's terms"
    )
    fix: str = Field(min_length=1, max_length=2000, description="what to change")
    concepts: list[Concept] = Field(min_length=1, max_length=5)


class Named(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [cluster_examples.NAMED]})

    mistake: NamedMistake
    rediagnosed: int = Field(
        description="past submissions that now carry it as their finding (scores unchanged)"
    )
