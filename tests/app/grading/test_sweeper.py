"""The sweeper, the same on both paths: it dispatches again what nobody answers for, once
across the deployment, and keeps going when a pass fails."""

from __future__ import annotations

from datetime import timedelta

from app_support import CORRECT, SEED, SettingsFactory, wait_until

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.grading.leases import Leases
from app.grading.sweeper import Sweeper


def test_two_sweepers_dispatch_an_orphan_once(
    database: Database, make_settings: SettingsFactory
) -> None:
    leases = Leases(database, make_settings(worker_lease_s=5))
    long_ago = utcnow() - timedelta(minutes=1)
    with database.session() as session:
        rows = [
            Submission(
                exercise=SEED,
                source=CORRECT,
                status=SubmissionStatus.RUNNING,
                attempts=1,
                created_at=long_ago,
                started_at=long_ago,
                lease_holder="dead",
                lease_expires_at=long_ago,
            ),
            Submission(exercise=SEED, source=CORRECT, created_at=utcnow()),
        ]
        session.add_all(rows)
        session.flush()
        orphan = rows[0].id
    sent: list[str] = []
    first, second = (Sweeper(leases, sent.append, period_s=60) for _ in range(2))
    assert first.sweep() == [orphan]
    assert second.sweep() == []
    assert sent == [orphan]


def test_the_sweeper_sweeps_at_start_and_outlives_a_failing_pass(
    database: Database, make_settings: SettingsFactory
) -> None:
    leases = Leases(database, make_settings(worker_lease_s=0.1))
    with database.session() as session:
        row = Submission(exercise=SEED, source=CORRECT, created_at=utcnow() - timedelta(1))
        session.add(row)
        session.flush()
        orphan = row.id
    calls: list[str] = []

    def dispatch(submission_id: str) -> None:
        calls.append(submission_id)
        if len(calls) == 1:
            raise RuntimeError("the broker is away")

    sweeper = Sweeper(leases, dispatch, period_s=0.05)
    sweeper.start()
    try:
        wait_until(lambda: len(calls) >= 2)  # taken again once the first take lapsed
    finally:
        sweeper.close()
    assert set(calls) == {orphan}
