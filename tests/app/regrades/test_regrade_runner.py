"""The regrade runner, step by step, on SQLite and PostgreSQL: what it keeps and sends, that
students' submissions come first, and that a regrade resumes after a stopped or dead runner
without grading anything twice. (The routes and the background loop: test_regrade_routes.py; the LMS
end to end: tests/app/lti/test_regrade_passback.py.)"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from app_support import (
    CORRECT,
    MISSING_SCALING,
    RUNS_PER_GRADING,
    SEED,
    FakeSandbox,
    SettingsFactory,
    load_submission,
    store_submission,
    wait_until,
)
from regrade_support import graded_earlier, history, regrade_row
from sqlalchemy import select, update

from app.core.db import Database
from app.core.models import DEFAULT_COURSE_ID, SubmissionStatus, utcnow
from app.grading.job import GradingContext, grade_submission
from app.grading.leases import renew_held
from app.grading.models import HiddenTestsRun, ReportOutcome
from app.grading.report_store import outcome_rows
from app.outbox.models import WebhookDelivery
from app.outbox.webhooks import record_regraded
from app.regrades import service
from app.regrades.models import Regrade, RegradeStatus
from app.regrades.runner import RegradeRunner, Step
from grader.report import Report
from grader.runner import Grader

OLD_VERSION = "0123456789ab"


@pytest.fixture
def reports(grader: Grader, sandbox: FakeSandbox) -> dict[str, Report]:
    graded = {"correct": grader.grade(SEED, CORRECT), "wrong": grader.grade(SEED, MISSING_SCALING)}
    sandbox.runs.clear()
    return graded


def runner(
    make_settings: SettingsFactory, database: Database, grader: Grader, holder: str = "runner-a"
) -> RegradeRunner:
    """A runner that is stepped by hand (never started), in a process of one sandbox slot."""
    context = GradingContext(make_settings(sandbox_slots=1), database, grader, holder)
    return RegradeRunner(context, on_regraded=[record_regraded])


def request(database: Database, grader: Grader, student_id: str | None = None) -> str:
    version = grader.catalog.get(SEED).version
    with database.session() as session:
        requested = service.request(session, DEFAULT_COURSE_ID, SEED, version, student_id, None)
        return requested.regrade.id


def source(n: int) -> str:
    return f"{CORRECT}\n# submission {n}\n"


def graded_runs(sandbox: FakeSandbox, text: str) -> int:
    return sandbox.runs.count(text) // RUNS_PER_GRADING


def test_a_regrade_keeps_the_old_report_as_history_and_announces_only_changed_scores(
    database: Database,
    grader: Grader,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    callback = {"callback_url": "https://lms.example.edu/hook"}
    # A correct source that an earlier, faulty version of the exercise failed; and one it passed.
    fixed = graded_earlier(database, source(1), reports["wrong"], **callback)
    same = graded_earlier(database, source(2), reports["correct"], **callback)
    before = load_submission(database, fixed)
    regrade_id = request(database, grader)
    assert regrade_row(database, regrade_id).total == 2

    stepped = runner(make_settings, database, grader)
    assert [stepped.step() for _ in range(4)] == [
        Step.GRADED,
        Step.GRADED,
        Step.FINISHED,
        Step.IDLE,
    ]

    regrade = regrade_row(database, regrade_id)
    assert (regrade.status, regrade.graded, regrade.changed) == (RegradeStatus.DONE, 2, 1)
    assert regrade.cursor == same and regrade.finished_at is not None
    assert regrade.lease_holder is None
    after = load_submission(database, fixed)
    assert after.status is SubmissionStatus.DONE
    assert (after.report_status, after.score) == ("passed", reports["correct"].score)
    assert after.exercise_version == grader.catalog.get(SEED).version
    with database.session() as session:
        rows = session.scalars(
            select(ReportOutcome).where(ReportOutcome.submission_id == fixed)
        ).all()
        stored = [(r.kind, r.name, r.status, r.visibility) for r in rows]
    assert (
        after.report is not None
    )  # its rows are the stored report's, as app.grading.report_store has them
    new_rows = outcome_rows(fixed, Report.model_validate(after.report))
    assert sorted(stored) == sorted(
        (r["kind"], r["name"], r["status"], r["visibility"]) for r in new_rows
    )
    (past,) = history(database, fixed)
    assert (past.report_status, past.score, past.regrade_id) == (
        "failed",
        reports["wrong"].score,
        regrade_id,
    )
    assert past.report == before.report and past.graded_at == before.finished_at
    assert past.exercise_version == before.exercise_version
    assert len(history(database, same)) == 1  # replaced by an equal report: history all the same
    with database.session() as session:
        announced = session.scalars(select(WebhookDelivery)).all()
        assert [(d.submission_id, d.event) for d in announced] == [(fixed, "submission.regraded")]
        # What their hidden tests did, for staff, recorded by the regrade (none was before).
        kept = {row.submission_id: row.detail for row in session.scalars(select(HiddenTestsRun))}
    assert kept.keys() == {fixed, same}
    assert all(test["passed"] for test in kept[fixed]["tests"])


def test_the_reason_says_whether_any_submission_was_graded_with_another_version(
    database: Database, grader: Grader, reports: dict[str, Report]
) -> None:
    current = graded_earlier(database, source(1), reports["correct"])
    assert current
    requested = request(database, grader)
    assert regrade_row(database, requested).reason == "requested"
    graded_earlier(database, source(2), reports["correct"], exercise_version=OLD_VERSION)
    # Asked again while active: the same regrade; another scope (one student's) is another.
    assert request(database, grader) == requested
    one_student = request(database, grader, student_id="s1")
    assert one_student != requested
    with database.session() as session:
        service.cancel(session, service.find(session, DEFAULT_COURSE_ID, requested))
    renewed = request(database, grader)
    assert renewed != requested
    assert regrade_row(database, renewed).reason == "new-version"
    assert regrade_row(database, renewed).total == 2


def test_students_submissions_are_graded_before_the_regrades_next_one(
    database: Database,
    grader: Grader,
    sandbox: FakeSandbox,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    first = graded_earlier(database, source(1), reports["correct"])
    second = graded_earlier(database, source(2), reports["correct"])
    regrade_id = request(database, grader)
    stepped = runner(make_settings, database, grader)
    assert stepped.step() is Step.GRADED

    student = store_submission(database, source=source(3))  # queued: a student waits
    assert stepped.step() is Step.YIELDED
    assert regrade_row(database, regrade_id).cursor == first
    grade_submission(student, GradingContext(make_settings(), database, grader, "grader"))
    # Its one sandbox slot busy with a student's grading, the process yields too.
    running = store_submission(
        database, source=source(4), status=SubmissionStatus.RUNNING, lease_holder="runner-a"
    )
    assert stepped.step() is Step.YIELDED
    grade_submission(running, GradingContext(make_settings(), database, grader, "runner-a"))
    assert stepped.step() is Step.GRADED

    assert sandbox.runs == [
        text
        for text in (source(1), source(3), source(4), source(2))
        for _ in range(RUNS_PER_GRADING)
    ]
    assert regrade_row(database, regrade_id).cursor == second


def expire_lease(database: Database, regrade_id: str) -> None:
    """As time passes for a runner that stopped: its lease on the regrade runs out."""
    with database.session() as session:
        session.execute(
            update(Regrade)
            .where(Regrade.id == regrade_id)
            .values(lease_expires_at=utcnow() - timedelta(seconds=1))
        )


def test_a_dead_runners_regrade_is_taken_over_after_its_lease_from_its_cursor(
    database: Database,
    grader: Grader,
    sandbox: FakeSandbox,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    ids = [graded_earlier(database, source(n), reports["wrong"]) for n in range(3)]
    regrade_id = request(database, grader)
    dead = runner(make_settings, database, grader, "runner-a")
    assert dead.step() is Step.GRADED  # then it stops, holding the lease
    other = runner(make_settings, database, grader, "runner-b")
    assert other.step() is Step.IDLE  # the lease is alive: not another's to take

    expire_lease(database, regrade_id)
    assert [other.step() for _ in range(3)] == [Step.GRADED, Step.GRADED, Step.FINISHED]
    assert dead.step() is Step.IDLE

    regrade = regrade_row(database, regrade_id)
    assert (regrade.status, regrade.graded, regrade.changed, regrade.cursor) == (
        RegradeStatus.DONE,
        3,
        3,
        ids[-1],
    )
    assert [graded_runs(sandbox, source(n)) for n in range(3)] == [1, 1, 1]
    assert [len(history(database, submission)) for submission in ids] == [1, 1, 1]


def test_its_process_s_heartbeat_renews_the_regrade_a_runner_holds_until_it_is_done(
    database: Database,
    grader: Grader,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    for n in range(2):
        graded_earlier(database, source(n), reports["wrong"])
    regrade_id = request(database, grader)
    context = GradingContext(make_settings(sandbox_slots=1), database, grader, "runner-a")
    stepped = RegradeRunner(context)
    assert stepped.step() is Step.GRADED
    expire_lease(database, regrade_id)
    renew_held(database, context.held, "runner-a", 3600)
    expires = regrade_row(database, regrade_id).lease_expires_at
    assert expires is not None and expires > utcnow() + timedelta(minutes=30)
    assert [stepped.step(), stepped.step()] == [Step.GRADED, Step.FINISHED]
    assert context.held.snapshot() == {}  # done: nothing left to renew


def test_a_runner_that_lost_its_lease_while_grading_stores_nothing(
    database: Database,
    grader: Grader,
    sandbox: FakeSandbox,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    submission = graded_earlier(database, source(1), reports["wrong"])
    regrade_id = request(database, grader)
    slow = runner(make_settings, database, grader, "runner-a")
    other = runner(make_settings, database, grader, "runner-b")
    sandbox.gate.clear()
    steps: dict[str, Step] = {}
    threads = [
        threading.Thread(target=lambda: steps.update(a=slow.step())),
        threading.Thread(target=lambda: steps.update(b=other.step())),
    ]
    threads[0].start()
    wait_until(lambda: len(sandbox.runs) == 1)  # runner a grades, under its lease
    expire_lease(database, regrade_id)
    threads[1].start()
    wait_until(lambda: len(sandbox.runs) == 2)  # runner b took it over, and grades the same
    sandbox.gate.set()
    for thread in threads:
        thread.join(timeout=60)

    assert steps == {"a": Step.LOST, "b": Step.GRADED}
    regrade = regrade_row(database, regrade_id)
    assert (regrade.graded, regrade.changed, regrade.lease_holder) == (1, 1, "runner-b")
    assert len(history(database, submission)) == 1


def test_a_cancelled_regrade_stops_and_drops_the_grading_in_flight(
    database: Database,
    grader: Grader,
    sandbox: FakeSandbox,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    submission = graded_earlier(database, source(1), reports["wrong"])
    graded_earlier(database, source(2), reports["wrong"])
    regrade_id = request(database, grader)
    stepped = runner(make_settings, database, grader)
    sandbox.gate.clear()
    steps: list[Step] = []
    thread = threading.Thread(target=lambda: steps.append(stepped.step()))
    thread.start()
    wait_until(lambda: len(sandbox.runs) == 1)
    with database.session() as session:
        cancelled = service.cancel(session, service.find(session, DEFAULT_COURSE_ID, regrade_id))
        assert cancelled.status is RegradeStatus.CANCELLED
    sandbox.gate.set()
    thread.join(timeout=60)

    assert steps == [Step.LOST]
    assert stepped.step() is Step.IDLE
    regrade = regrade_row(database, regrade_id)
    assert (regrade.status, regrade.graded) == (RegradeStatus.CANCELLED, 0)
    assert regrade.finished_at is not None
    assert history(database, submission) == []
    assert load_submission(database, submission).report_status == "failed"


def test_one_students_regrade_grades_that_students_submissions_only(
    database: Database,
    grader: Grader,
    sandbox: FakeSandbox,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    mine = graded_earlier(database, source(1), reports["wrong"], student_id="s1")
    graded_earlier(database, source(2), reports["wrong"], student_id="s2")
    regrade_id = request(database, grader, student_id="s1")
    assert regrade_row(database, regrade_id).total == 1
    stepped = runner(make_settings, database, grader)
    assert [stepped.step(), stepped.step()] == [Step.GRADED, Step.FINISHED]
    assert [graded_runs(sandbox, source(n)) for n in (1, 2)] == [1, 0]
    assert regrade_row(database, regrade_id).cursor == mine


def test_a_regrade_of_nothing_is_done_as_it_is_asked(database: Database, grader: Grader) -> None:
    regrade = regrade_row(database, request(database, grader))
    assert (regrade.status, regrade.total, regrade.last_id) == (RegradeStatus.DONE, 0, None)
    assert regrade.finished_at is not None


def test_a_grading_that_fails_keeps_the_report_the_submission_had(
    database: Database,
    grader: Grader,
    reports: dict[str, Report],
    make_settings: SettingsFactory,
) -> None:
    # An exercise removed since: the grader fails on it, through no fault of the student.
    gone = reports["correct"].model_copy(update={"exercise": "removed-since"})
    submission = graded_earlier(database, source(1), gone)
    with database.session() as session:
        regrade_id = service.request(
            session, DEFAULT_COURSE_ID, "removed-since", "", None, None
        ).regrade.id
    stepped = runner(make_settings, database, grader)
    assert [stepped.step(), stepped.step()] == [Step.GRADED, Step.FINISHED]
    regrade = regrade_row(database, regrade_id)
    assert (regrade.graded, regrade.changed) == (1, 0)
    assert history(database, submission) == []
    assert load_submission(database, submission).report_status == "passed"
