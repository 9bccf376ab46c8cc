"""The wire schemas of the staff routes (app.staff.router): a course's figures, its students,
and its exercise policies. Every figure is computed by SQL (app.staff.stats, app.staff.scores).

Words used throughout: a *student* is a distinct student id (submissions without one count as
submissions, never as students); a *graded* submission is a finished one; a *scored* one is
graded with a report other than a grader fault ("error"), which holds no answer of the
student's. A student's *gradebook score* is, by the exercise's policy, the best or the latest
score of their scored submissions.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from app.api.submission_schemas import SubmissionSummary
from app.courses.models import GradebookScore
from app.staff import examples
from grader.spec import Visibility


class ExerciseSummary(BaseModel):
    exercise: str
    title: str
    submissions: int = Field(description="graded submissions")
    students: int
    passed_students: int = Field(description="students with at least one passing submission")
    mean_score: float | None = Field(
        description="the mean over students of gradebook score / max score (0..1); null when "
        "no student has a scored submission"
    )
    outdated_submissions: int = Field(
        description="graded with another version of the exercise than the one served now"
    )
    draft: str | None = Field(
        description="null once published; for a draft (not proven at its version: students do "
        "not see it), why it is one and what publishes it"
    )


class CourseExercises(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.COURSE_EXERCISES]})

    course: str
    exercises: list[ExerciseSummary] = Field(description="every exercise served, tried or not")


class ScoreBin(BaseModel):
    low: float
    high: float
    students: int = Field(
        description="students whose gradebook score / max score is in "
        "[low, high), or in [low, 1] for the last bin"
    )


class TestFigures(BaseModel):
    __test__ = False  # a wire schema, not a pytest test class

    name: str
    visibility: Visibility | None = Field(description="null for a test the exercise no longer has")
    submissions: int = Field(description="submissions whose tests ran (passed or failed)")
    passed: int
    pass_rate: float | None = Field(description="passed / submissions; null when none ran")


class KnownMisconception(BaseModel):
    code: str
    message: str = Field(
        description="what the grader tells a student who makes it (the code "
        "itself for a mistake the exercise no longer knows)"
    )
    students: int
    submissions: int
    share: float = Field(description="students / failing students (0..1)")


class Unrecognised(BaseModel):
    students: int
    submissions: int = Field(description="failing submissions that match no known mistake")
    share: float = Field(description="students / failing students (0..1)")


class Misconceptions(BaseModel):
    failing_students: int = Field(
        description="students with a failing submission (one that "
        'ran and gave a wrong output: status "failed")'
    )
    failing_submissions: int
    known: list[KnownMisconception] = Field(
        description="every mistake the exercise knows, most students first"
    )
    unrecognised: Unrecognised


class PropertyFigures(BaseModel):
    name: str
    checked: int = Field(description="submissions on which it was judged (passed or failed)")
    failed: int
    failed_students: int


class AttemptsBin(BaseModel):
    attempts: int
    students: int


class AttemptsToPass(BaseModel):
    histogram: list[AttemptsBin] = Field(
        description="students by the 1-based index, in "
        "submission order, of their first passing submission"
    )
    median: float | None
    never_passed: int


class Day(BaseModel):
    day: date = Field(description="in UTC")
    submissions: int
    students: int
    passed_submissions: int
    mean_score: float | None = Field(
        description="mean of score / max score of the day's scored submissions (0..1)"
    )


class ExerciseStats(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.EXERCISE_STATS]})

    course: str
    exercise: str
    title: str
    version: str = Field(description="the exercise's version served now")
    gradebook: GradebookScore
    submissions: int
    students: int
    passed_students: int
    outdated_submissions: int
    score_histogram: list[ScoreBin] = Field(description="ten bins of gradebook score / max score")
    tests: list[TestFigures] = Field(description="in the exercise's order")
    misconceptions: Misconceptions
    properties: list[PropertyFigures]
    attempts_to_pass: AttemptsToPass
    timeline: list[Day]


class StudentExercise(BaseModel):
    best: float | None = Field(description="the best score of a scored submission")
    latest: float | None = Field(description="the score of the latest scored submission")
    max_score: float | None
    attempts: int = Field(description="graded submissions")
    passed: bool


class StudentRow(BaseModel):
    student_id: str
    name: str | None = Field(default=None, description="from the LMS roster, if listed there")
    exercises: dict[str, StudentExercise] = Field(
        description="by slug, those tried only: empty for an enrolled student who submitted nothing"
    )


class CourseStudents(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.COURSE_STUDENTS]})

    exercises: list[str]
    students: list[StudentRow]


class StudentExerciseDetail(StudentExercise):
    exercise: str
    title: str
    gradebook: GradebookScore


class StudentDetail(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.STUDENT_DETAIL]})

    student_id: str
    exercises: list[StudentExerciseDetail] = Field(description="those the student tried")
    submissions: list[SubmissionSummary] = Field(
        description="newest first; each one's code and report at GET /v1/submissions/{id}"
    )
