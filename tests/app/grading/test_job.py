"""The grading job shared by the embedded pool and the workers, on SQLite and PostgreSQL:
claim once under a lease, bounded attempts, first finisher wins, what follows the report
recorded with it by the hooks."""

from __future__ import annotations

import dataclasses
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from app_support import (
    RUNS_PER_GRADING,
    FakeSandbox,
    load_submission,
    store_submission,
)
from pydantic import SecretStr
from sqlalchemy import select, update

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.core.settings import AppSettings
from app.grading.job import GradingContext, grade_submission
from app.grading.leases import Leases
from app.grading.models import HiddenTestsRun, OutcomeKind, ReportOutcome
from app.outbox.models import WebhookDelivery
from app.outbox.webhooks import record_delivery
from grader.report import Report
from grader.runner import Graded, Grader


@pytest.fixture
def context(database: Database, grader: Grader, tmp_path: Path) -> GradingContext:
    settings = AppSettings(data_dir=tmp_path, secret=SecretStr("test-secret"), max_attempts=2)
    return GradingContext(
        settings=settings,
        database=database,
        grader=grader,
        holder="here",
        on_graded=(record_delivery,),
    )


def test_a_queued_submission_is_graded_and_done(context: GradingContext) -> None:
    submission_id = store_submission(context.database)
    done: list[tuple[str, bool]] = []

    def on_done(submission_id: str, outbox_due: bool) -> None:
        done.append((submission_id, outbox_due))

    grade_submission(submission_id, context.__class__(**{**vars(context), "on_done": on_done}))
    row = load_submission(context.database, submission_id)
    assert row.status is SubmissionStatus.DONE
    assert row.attempts == 1
    assert row.report is not None and row.report["status"] == "passed"
    assert row.started_at is not None and row.finished_at is not None
    assert done == [(submission_id, False)]  # no callback_url: nothing for the outbox


def test_a_report_is_stored_with_its_figures_and_a_row_per_line(context: GradingContext) -> None:
    submission_id = store_submission(context.database)
    grade_submission(submission_id, context)
    row = load_submission(context.database, submission_id)
    report = Report.model_validate(row.report)
    assert (row.report_status, row.score, row.max_score) == (
        report.status.value,
        report.score,
        report.max_score,
    )
    assert row.charged is False  # a pass uses up no attempt
    with context.database.session() as session:
        tests = session.scalars(
            select(ReportOutcome.name).where(
                ReportOutcome.submission_id == submission_id,
                ReportOutcome.kind == OutcomeKind.TEST,
            )
        ).all()
    assert sorted(tests) == sorted(test.name for test in report.tests) and tests


def test_a_report_holding_text_postgresql_refuses_is_stored_once(
    context: GradingContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A correct solution that prints NUL (or raises a message with a lone surrogate) is
    graded once and stored passed, and so is what its hidden tests did; on PostgreSQL its JSONB
    refused such a report, and the submission was graded again until it ended as an error."""
    grade = context.grader.grade_in_full
    printed = {"stdout": "a\x00b\ud800"}

    def printing_nul(exercise: str, source: str) -> Graded:
        graded = grade(exercise, source)
        assert graded.hidden is not None
        tests = [test.model_copy(update=printed) for test in graded.report.tests]
        hidden_tests = [test.model_copy(update=printed) for test in graded.hidden.tests]
        return Graded(
            graded.report.model_copy(update={"tests": tests, "message": "\x00"}),
            graded.hidden.model_copy(update={"tests": hidden_tests}),
        )

    monkeypatch.setattr(context.grader, "grade_in_full", printing_nul)
    submission_id = store_submission(context.database)
    grade_submission(submission_id, context)
    row = load_submission(context.database, submission_id)
    assert row.attempts == 1
    assert row.report is not None and row.report["status"] == "passed"
    assert row.report["message"] == "\ufffd"
    assert row.report["tests"][0]["stdout"] == "a\ufffdb\ufffd"
    with context.database.session() as session:
        kept = session.get(HiddenTestsRun, submission_id)
        assert kept is not None
        assert kept.detail["tests"][0]["stdout"] == "a\ufffdb\ufffd"


def test_a_done_submission_is_not_graded_again(
    context: GradingContext, sandbox: FakeSandbox
) -> None:
    submission_id = store_submission(context.database)
    grade_submission(submission_id, context)
    grade_submission(submission_id, context)
    assert len(sandbox.runs) == RUNS_PER_GRADING
    assert load_submission(context.database, submission_id).attempts == 1


def test_a_live_running_submission_is_not_taken_but_a_stale_one_is(
    context: GradingContext, sandbox: FakeSandbox
) -> None:
    database = context.database
    submission_id = store_submission(
        database,
        status=SubmissionStatus.RUNNING,
        attempts=1,
        started_at=utcnow(),
        lease_holder="elsewhere",
        lease_expires_at=utcnow() + timedelta(minutes=1),
    )
    grade_submission(submission_id, context)
    assert sandbox.runs == []
    assert context.leases.orphans() == []

    long_ago = utcnow() - timedelta(seconds=context.settings.running_stale_after_s + 1)
    with database.session() as session:
        session.execute(update(Submission).values(started_at=long_ago))
    assert context.leases.orphans() == [submission_id]
    grade_submission(submission_id, context)
    row = load_submission(database, submission_id)
    assert row.status is SubmissionStatus.DONE and row.attempts == 2


def test_past_max_attempts_the_submission_gets_an_explicit_error_report(
    context: GradingContext, sandbox: FakeSandbox
) -> None:
    submission_id = store_submission(context.database, attempts=context.settings.max_attempts)
    grade_submission(submission_id, context)
    row = load_submission(context.database, submission_id)
    assert sandbox.runs == []
    assert row.status is SubmissionStatus.DONE
    assert row.report is not None
    assert row.report["status"] == "error"
    assert "interrupted 2 times" in row.report["message"]
    assert all(test["status"] == "error" for test in row.report["tests"])


def test_two_graders_racing_for_one_submission_grade_it_once(
    context: GradingContext, sandbox: FakeSandbox
) -> None:
    submission_id = store_submission(context.database, callback_url="http://127.0.0.1:9/hook")
    barrier = threading.Barrier(4)

    def race() -> None:
        barrier.wait()
        grade_submission(submission_id, context)

    threads = [threading.Thread(target=race) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(sandbox.runs) == RUNS_PER_GRADING
    with context.database.session() as session:
        deliveries = session.scalars(select(WebhookDelivery)).all()
    assert len(deliveries) == 1


def test_a_callback_url_records_a_delivery_with_the_report(context: GradingContext) -> None:
    submission_id = store_submission(context.database, callback_url="http://127.0.0.1:9/hook")
    done: list[bool] = []
    with_callback = dataclasses.replace(context, on_done=lambda _id, due: done.append(due))
    grade_submission(submission_id, with_callback)
    assert done == [True]  # the outbox is woken
    with context.database.session() as session:
        delivery = session.scalars(select(WebhookDelivery)).one()
    assert delivery.submission_id == submission_id
    assert delivery.url == "http://127.0.0.1:9/hook"
    assert delivery.status.value == "pending"


def test_unfinished_submissions_after_a_crash_go_back_to_queued(context: GradingContext) -> None:
    database = context.database
    running = store_submission(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=utcnow()
    )
    queued = store_submission(database)
    store_submission(database, status=SubmissionStatus.DONE)
    assert Leases(database, context.settings).release_all() == sorted([running, queued])
    row = load_submission(database, running)
    assert row.status is SubmissionStatus.QUEUED and row.attempts == 1
