"""A mistake a course named, where the service grades (app.grading.job, which the embedded pool
and the workers both run), on SQLite and PostgreSQL: a new submission that behaves so gets it
as its finding, at the score it would have had, in that course only. And under two hidden-test
secrets the groups staff see and the message a student reads are the same: nothing of a hidden
test reaches either."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_support import CORRECT, SEED, FakeSandbox, load_submission, store_submission
from pydantic import SecretStr
from sqlalchemy import func, select

from app.core.db import Database
from app.core.models import DEFAULT_COURSE_ID, Submission
from app.core.settings import AppSettings
from app.courses.registry import course_named
from app.grading.job import GradingContext, grade_submission
from app.outbox.webhooks import record_delivery, record_regraded
from app.regrades import service
from app.regrades.models import PastReport
from app.regrades.runner import RegradeRunner, Step
from app.staff.cluster_schemas import NameMistakeBody
from app.staff.clusters import exercise_clusters
from app.staff.naming import name_mistake
from grader.catalog import Catalog
from grader.report import Report
from grader.runner import Grader

# No known mistake explains either: the positions come out last to first, or halved.
REVERSED = CORRECT.replace("return scores @ v", "return torch.flip(scores @ v, dims=[1])")
HALVED = CORRECT.replace("return scores @ v", "return (scores @ v) / 2")
NAME = {
    "code": "positions-reversed",
    "message": "Your output has its positions in reverse order.",
    "fix": "Do not flip the sequence axis.",
    "concepts": ["positions"],
}


def context_of(database: Database, grader: Grader, data_dir: Path) -> GradingContext:
    settings = AppSettings(data_dir=data_dir, secret=SecretStr("test-secret"))
    return GradingContext(
        settings=settings,
        database=database,
        grader=grader,
        holder="here",
        on_graded=(record_delivery,),
    )


def graded(context: GradingContext, course: str, student: str, source: str) -> Report:
    with context.database.session() as session:
        course_id = course_named(session, course).id
    submission_id = store_submission(
        context.database, course_id=course_id, student_id=student, source=source
    )
    grade_submission(submission_id, context)
    report = load_submission(context.database, submission_id).report
    assert report is not None
    return Report.model_validate(report)


def name(context: GradingContext, catalog: Catalog, key: str, course: str = "ml-101") -> int:
    """Names the group of `key` in the course; returns how many past reports got it."""
    with context.database.session() as session:
        named_in = course_named(session, course)
        body = NameMistakeBody.model_validate({**NAME, "behaviour_key": key})
        return name_mistake(session, named_in, catalog.get(SEED), body).rediagnosed


def test_a_new_submission_gets_the_mistake_its_course_named(
    database: Database, grader: Grader, catalog: Catalog, tmp_path: Path
) -> None:
    context = context_of(database, grader, tmp_path)
    first = graded(context, "ml-101", "ada", REVERSED)
    assert first.diagnosis == [] and first.behaviour is not None
    assert name(context, catalog, first.behaviour.key) == 1

    again = graded(context, "ml-101", "bob", REVERSED)
    [finding] = again.diagnosis
    assert (finding.code, finding.concepts) == ("positions-reversed", ["positions"])
    assert finding.message == f"{NAME['message']} Fix: {NAME['fix']}"
    assert finding.tests == first.behaviour.failing_tests
    assert (again.status, again.score) == (first.status, first.score)
    assert graded(context, "ml-101", "cy", HALVED).diagnosis == []  # another behaviour
    assert graded(context, "cv-202", "ada", REVERSED).diagnosis == []  # another course


def test_a_regrade_keeps_the_mistake_its_course_named(
    database: Database, grader: Grader, catalog: Catalog, tmp_path: Path
) -> None:
    context = context_of(database, grader, tmp_path)
    first = graded(context, "default", "ada", REVERSED)
    assert first.behaviour is not None
    name(context, catalog, first.behaviour.key, "default")
    with database.session() as session:
        version = catalog.get(SEED).version
        regrade = service.request(session, DEFAULT_COURSE_ID, SEED, version, None, None)
    stepped = RegradeRunner(context, on_regraded=[record_regraded])
    assert [stepped.step(), stepped.step()] == [Step.GRADED, Step.FINISHED]
    with database.session() as session:
        [row] = session.scalars(select(Submission)).all()
        assert [one.code for one in Report.model_validate(row.report).diagnosis] == [NAME["code"]]
        assert session.scalar(select(func.count()).select_from(PastReport)) == 1
    assert regrade.regrade.total == 1


def view(context: GradingContext, catalog: Catalog) -> dict[str, Any]:
    """The groups staff see, without what differs by when and by id."""
    with context.database.session() as session:
        clusters = exercise_clusters(session, course_named(session, "ml-101"), catalog.get(SEED))
    seen = clusters.model_dump(exclude={"named": {"__all__": {"created_at"}}})
    for cluster in seen["clusters"]:
        for example in cluster["examples"]:
            del example["submission_id"]
    return seen


def test_the_groups_and_the_message_are_the_same_under_any_hidden_test_secret(
    catalog: Catalog, tmp_path: Path
) -> None:
    sandbox = FakeSandbox()
    seen = []
    for secret in ("one secret", "another secret"):
        database = Database.from_url(f"sqlite:///{tmp_path / secret.replace(' ', '-')}.db")
        database.migrate()
        context = context_of(database, Grader(catalog, sandbox, secret), tmp_path)
        for student, source in (("ada", REVERSED), ("bob", REVERSED), ("cy", HALVED)):
            graded(context, "ml-101", student, source)
        before = view(context, catalog)
        name(context, catalog, before["clusters"][0]["key"])
        message = [
            finding.message for finding in graded(context, "ml-101", "dan", REVERSED).diagnosis
        ]
        seen.append((before, view(context, catalog), message))
        database.close()
    assert seen[0] == seen[1]
    assert seen[0][2] == [f"{NAME['message']} Fix: {NAME['fix']}"]
