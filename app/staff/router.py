"""/v1/courses/{course}/...: a course's figures, students, gradebook, export and exercise
policies, for its staff only (app.staff.deps: anyone else gets 404, as for a course that does
not exist)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import Response, StreamingResponse

from app.access.served import CatalogDep, ExerciseDep
from app.api.deps import SessionDep
from app.api.problem_docs import responses
from app.api.problems import (
    CourseNotFound,
    ExerciseUnavailable,
    MistakeTaken,
    SubmissionNotFound,
    Unauthorized,
    UnknownBehaviour,
    UnknownExercise,
)
from app.core.student_ids import StudentId
from app.courses import policies
from app.courses.policies import ExercisePolicyBody, ExercisePolicyPublic
from app.staff import (
    clusters,
    concept_export,
    concept_stats,
    examples,
    exports,
    hidden_tests,
    naming,
    stats,
    students,
)
from app.staff.cluster_schemas import ExerciseClusters, Named, NameMistakeBody
from app.staff.concept_schemas import CourseConcepts
from app.staff.deps import StaffCourseDep
from app.staff.hidden_tests import SubmissionHiddenTests
from app.staff.schemas import (
    CourseExercises,
    CourseStudents,
    ExerciseStats,
    StudentDetail,
)

router = APIRouter(prefix="/courses/{course}", tags=["course staff"])

_COURSE = responses(Unauthorized, CourseNotFound)
_EXERCISE = responses(Unauthorized, CourseNotFound, UnknownExercise, ExerciseUnavailable)


@router.get(
    "/exercises",
    response_model=CourseExercises,
    summary="The course's exercises, with their totals",
    responses=_COURSE,
)
def list_exercises(
    course: StaffCourseDep, session: SessionDep, catalog: CatalogDep
) -> CourseExercises:
    """Every exercise served, with zeros for one nobody tried: submissions, students, students
    who passed, the mean gradebook score and the submissions graded with an older version."""
    return stats.course_exercises(session, course, catalog)


@router.get(
    "/exercises/{slug}/stats",
    response_model=ExerciseStats,
    summary="An exercise's figures across the course",
    responses=_EXERCISE,
)
def exercise_stats(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep
) -> ExerciseStats:
    """Where the class stands and struggles: the gradebook scores' distribution, each test's
    pass rate, the share of failing students per diagnosed mistake (and the wrong answers no
    known mistake matched, counted apart), property failures, attempts until the first pass,
    and all of it day by day. Every figure is counted by the database."""
    return stats.exercise_stats(session, course, exercise)


@router.get(
    "/students",
    response_model=CourseStudents,
    summary="Every student's scores on every exercise",
    responses=_COURSE,
)
def list_students(
    course: StaffCourseDep, session: SessionDep, catalog: CatalogDep
) -> CourseStudents:
    """Per student and exercise tried: best and latest score, attempts and whether they passed.
    Active students of the LMS roster are listed too, with no exercise if they submitted
    nothing, and their roster name."""
    return students.course_students(session, course.id, catalog)


@router.get(
    "/students/{student_id:path}",
    response_model=StudentDetail,
    summary="One student's scores and submissions",
    responses=_COURSE,
)
def get_student(
    course: StaffCourseDep,
    session: SessionDep,
    catalog: CatalogDep,
    student_id: Annotated[StudentId, Path()],
) -> StudentDetail:
    """Their scores per exercise tried, and their submissions, newest first (empty for a
    student who submitted nothing). Each submission's code and report:
    `GET /v1/submissions/{id}`."""
    return students.student_detail(session, course.id, student_id, catalog)


@router.get(
    "/submissions/{submission_id}/hidden-tests",
    response_model=SubmissionHiddenTests,
    summary="What each hidden test of a submission did",
    responses=responses(Unauthorized, CourseNotFound, SubmissionNotFound),
)
def get_hidden_tests(
    course: StaffCourseDep, session: SessionDep, submission_id: str
) -> SubmissionHiddenTests:
    """Per hidden test: the input set it was graded on and its inputs' shapes, its outputs'
    comparisons (the first mismatch, as a visible test shows it), the error it raised with its
    line, or where and why the run stopped, and its prints. Staff only: the student's report
    says one bit per hidden test, so that a submission cannot learn the hidden inputs."""
    return hidden_tests.submission_hidden_tests(session, course, submission_id)


@router.get(
    "/gradebook.csv",
    summary="The gradebook, as CSV",
    response_class=Response,
    responses={
        200: {
            "content": {"text/csv": {"example": examples.GRADEBOOK_CSV}},
            "description": "the gradebook",
        },
        **_COURSE,
    },
)
def gradebook(course: StaffCourseDep, session: SessionDep, catalog: CatalogDep) -> Response:
    """A column per exercise; under the heading a `Points Possible` row with each exercise's
    maximum (as Canvas's own gradebook export has it); then one row per student: the best or
    the latest score, as each exercise's policy says, empty where the student has none.
    Students enrolled in the LMS roster are listed even with nothing graded; the last columns
    are their name in the roster and `submitted` or `not submitted`. A cell that a spreadsheet
    would run as a formula is written as text."""
    return Response(
        exports.gradebook_csv(session, course.id, catalog),
        media_type="text/csv; charset=utf-8",
        headers=_attachment(f"{course.slug}-gradebook.csv"),
    )


@router.get(
    "/exercises/{slug}/export.zip",
    summary="Every submission of an exercise: code and report",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {
                "application/zip": {
                    "schema": {"type": "string", "format": "binary"},
                    "example": examples.EXPORT_ZIP,
                }
            },
            "description": "the submissions",
        },
        **_EXERCISE,
    },
)
def export(course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep) -> Response:
    """A zip of `submissions/<id>.py` (the code), `submissions/<id>.json` (its report) and
    `manifest.csv` (id, student, time, version, result, score of each), for offline review or
    a similarity check of your own."""
    slug = exercise.spec.slug
    archive = exports.export_zip(session, course.id, slug)
    return StreamingResponse(
        exports.chunks(archive),
        media_type="application/zip",
        headers=_attachment(f"{course.slug}-{slug}.zip"),
    )


@router.get(
    "/concepts",
    response_model=CourseConcepts,
    summary="Per concept, the students who still hold a mistake about it, week by week",
    responses=_COURSE,
)
def concepts(course: StaffCourseDep, session: SessionDep) -> CourseConcepts:
    """Across exercises: per knowledge component (scaling, masking, ...), the students whose
    latest submission to some exercise, as of each week's end and now, has a finding about
    it. Every figure is counted by the database."""
    return concept_stats.course_concepts(session, course)


@router.get(
    "/concepts.csv",
    summary="The concept figures, as CSV",
    response_class=Response,
    responses={
        200: {
            "content": {"text/csv": {"example": examples.CONCEPTS_CSV}},
            "description": "a row per concept, a column per week",
        },
        **_COURSE,
    },
)
def concepts_csv(course: StaffCourseDep, session: SessionDep) -> Response:
    """A row per concept: the students who hold it as of each week's end (a column per week,
    headed by its Monday), then now."""
    figures = concept_stats.course_concepts(session, course)
    return Response(
        concept_export.concepts_csv(figures),
        media_type="text/csv; charset=utf-8",
        headers=_attachment(f"{course.slug}-concepts.csv"),
    )


@router.get(
    "/concepts.json",
    summary="The concept figures, as a JSON file",
    response_class=Response,
    responses={
        200: {
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/CourseConcepts"}}
            },
            "description": "the document of GET /v1/courses/{course}/concepts",
        },
        **_COURSE,
    },
)
def concepts_file(course: StaffCourseDep, session: SessionDep) -> Response:
    """The document of `GET /v1/courses/{course}/concepts`, to download."""
    figures = concept_stats.course_concepts(session, course)
    return Response(
        concept_export.concepts_json(figures),
        media_type="application/json",
        headers=_attachment(f"{course.slug}-concepts.json"),
    )


@router.get(
    "/exercises/{slug}/policy",
    response_model=ExercisePolicyPublic,
    summary="An exercise's settings in the course",
    responses=_EXERCISE,
)
def get_policy(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep
) -> ExercisePolicyPublic:
    """Which score the gradebook takes, the attempt budget, and the course's due date with its
    late policy (none of either by default; `lms_due_at`: the date the LMS gave, if any)."""
    return policies.read_policy(session, course.id, exercise.spec.slug)


@router.put(
    "/exercises/{slug}/policy",
    response_model=ExercisePolicyPublic,
    summary="Change an exercise's settings in the course",
    responses=_EXERCISE,
)
def put_policy(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep, body: ExercisePolicyBody
) -> ExercisePolicyPublic:
    """The gradebook's score (`best` or `latest`), an optional attempt budget: `attempts`
    per `window_s` seconds, both or neither, and an optional due date with its late policy.
    Replaces the previous settings."""
    return policies.write_policy(session, course.id, exercise.spec.slug, body)


@router.get(
    "/exercises/{slug}/clusters",
    response_model=ExerciseClusters,
    summary="The wrong answers no known mistake explains, grouped by what they do",
    responses=_EXERCISE,
)
def exercise_clusters(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep
) -> ExerciseClusters:
    """Failing submissions without a diagnosis, grouped by how their outputs differ from the
    reference's on the visible tests (and which tests fail, which properties break), most
    students first; each group with a few examples beside the reference's output. Also the
    mistakes the course named, and the concepts a name may be tagged with."""
    return clusters.exercise_clusters(session, course, exercise)


@router.post(
    "/exercises/{slug}/mistakes",
    response_model=Named,
    status_code=201,
    summary="Name a group of unexplained wrong answers as a mistake of the course",
    responses=responses(
        Unauthorized, CourseNotFound, UnknownExercise, UnknownBehaviour, MistakeTaken
    ),
)
def name_mistake(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep, body: NameMistakeBody
) -> Named:
    """From now on the group (`behaviour_key`) is a mistake of this course: its past failing
    submissions get it as their finding now (a re-diagnosis: no score changes, nothing is sent
    to the LMS), and new ones when they are graded. The student reads the message, then the
    fix."""
    return naming.name_mistake(session, course, exercise, body)


def _attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}
