"""Leases, the same on both paths, on SQLite and PostgreSQL: on submission rows a live lease is
exclusive, only its holder renews it, an expired one leaves the submission to be claimed again,
and of several sweepers one takes an orphan; one heartbeat renews a process's leases on every
kind of work."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

import pytest
from app_support import SettingsFactory, load_submission, store_submission
from sqlalchemy import select

from app.core.db import Database
from app.core.models import DEFAULT_COURSE_ID, Submission, SubmissionStatus, utcnow
from app.grading.leases import DISPATCHED, SUBMISSIONS, Claim, Held, Leases, renew_held
from app.regrades.models import REGRADES, Regrade, RegradeStatus

LEASE_S = 0.5


def beat(database: Database, holder: str, *submission_ids: str) -> None:
    """One heartbeat of a process named `holder` that grades these submissions."""
    held = Held()
    for submission_id in submission_ids:
        held.add(SUBMISSIONS, submission_id)
    renew_held(database, held, holder, LEASE_S)


@pytest.fixture
def leases(database: Database, make_settings: SettingsFactory) -> Leases:
    return Leases(database, make_settings(worker_lease_s=LEASE_S, running_stale_after_s=600))


def test_a_live_lease_is_exclusive_and_lapses_when_not_renewed(
    leases: Leases, database: Database
) -> None:
    submission_id = store_submission(database)
    claim = leases.claim(submission_id, "one")
    assert claim is not None and claim.attempts == 1
    assert leases.claim(submission_id, "two") is None
    time.sleep(LEASE_S * 0.6)
    beat(database, "two", submission_id)  # only its holder renews it
    beat(database, "one", submission_id)
    time.sleep(LEASE_S * 0.6)
    assert leases.claim(submission_id, "two") is None  # renewed: still live
    time.sleep(LEASE_S * 1.2)
    again = leases.claim(submission_id, "two")  # the holder died: claimable, one more attempt
    assert again is not None and again.attempts == 2
    assert load_submission(database, submission_id).lease_holder == "two"
    beat(database, "one", submission_id)  # the dead holder's late beat changes nothing
    assert load_submission(database, submission_id).lease_holder == "two"


def test_a_dispatchers_lease_never_overrides_a_graders(leases: Leases, database: Database) -> None:
    submission_id = store_submission(database)
    assert leases.claim(submission_id, "fast-worker") is not None  # before the API's send ends
    leases.dispatched([submission_id], 3600)
    assert load_submission(database, submission_id).lease_holder == "fast-worker"
    queued = store_submission(database)
    leases.dispatched([queued], 3600)
    row = load_submission(database, queued)
    assert row.lease_holder == DISPATCHED
    assert row.lease_expires_at is not None and row.lease_expires_at > utcnow()
    assert leases.claim(queued, "worker") is not None  # the message's worker claims it


def test_orphans_are_what_nobody_answers_for_and_one_sweeper_takes_each(
    leases: Leases, database: Database
) -> None:
    long_ago, soon = utcnow() - timedelta(minutes=1), utcnow() + timedelta(minutes=1)
    dead = store_submission(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=long_ago,
        created_at=long_ago, lease_holder="dead", lease_expires_at=long_ago,
    )  # fmt: skip
    lost = store_submission(database, created_at=long_ago)  # queued, its message never sent
    live = store_submission(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=long_ago,
        created_at=long_ago, lease_holder="alive", lease_expires_at=soon,
    )  # fmt: skip
    waiting = store_submission(
        database, created_at=long_ago, lease_holder=DISPATCHED, lease_expires_at=soon
    )
    young = store_submission(database, created_at=utcnow())  # its dispatcher may be sending it now
    wedged = store_submission(
        database, status=SubmissionStatus.RUNNING, attempts=1,
        started_at=utcnow() - timedelta(hours=1), created_at=long_ago,
        lease_holder="wedged", lease_expires_at=soon,
    )  # fmt: skip
    store_submission(database, status=SubmissionStatus.DONE, created_at=long_ago)

    assert leases.orphans() == sorted([dead, lost, wedged])
    assert [leases.take(i) for i in (dead, lost, wedged)] == [True] * 3
    assert [leases.take(i) for i in (dead, lost, wedged, live, waiting, young)] == [False] * 6
    dead_row = load_submission(database, dead)
    assert (dead_row.status, dead_row.attempts) == (SubmissionStatus.QUEUED, 1)
    assert (
        load_submission(database, wedged).status is SubmissionStatus.RUNNING
    )  # claimable as it is
    assert load_submission(database, live).status is SubmissionStatus.RUNNING
    assert leases.orphans() == []
    beat(database, "wedged", wedged)  # the wedged grader lost its lease to the sweeper
    assert load_submission(database, wedged).lease_holder == DISPATCHED
    assert leases.claim(wedged, "another") is not None


def test_the_only_grader_releases_every_lease_at_start(leases: Leases, database: Database) -> None:
    running = store_submission(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=utcnow(),
        lease_holder="last-run", lease_expires_at=utcnow() + timedelta(minutes=1),
    )  # fmt: skip
    queued = store_submission(database)
    store_submission(database, status=SubmissionStatus.DONE)
    assert leases.release_all() == sorted([running, queued])
    row = load_submission(database, running)
    assert (row.status, row.attempts, row.lease_holder) == (SubmissionStatus.QUEUED, 1, None)
    assert leases.depth() == 2


def test_one_heartbeat_renews_the_holders_leases_on_every_kind_of_work(
    leases: Leases, database: Database
) -> None:
    soon = utcnow() + timedelta(seconds=LEASE_S)
    submission_id = store_submission(database)
    assert leases.claim(submission_id, "one") is not None
    with database.session() as session:
        regrade = Regrade(
            course_id=DEFAULT_COURSE_ID, exercise="e", reason="requested",
            status=RegradeStatus.RUNNING, lease_holder="one", lease_expires_at=soon,
        )  # fmt: skip
        session.add(regrade)
        session.flush()
        regrade_id = regrade.id
    held = Held()
    held.add(SUBMISSIONS, submission_id)
    held.add(REGRADES, regrade_id)

    def expiries() -> list[datetime | None]:
        with database.session() as session:
            regrade_expires = session.scalar(
                select(Regrade.lease_expires_at).where(Regrade.id == regrade_id)
            )
        return [load_submission(database, submission_id).lease_expires_at, regrade_expires]

    before = expiries()
    renew_held(database, held, "two", 3600)  # another process's beat changes nothing
    assert expiries() == before
    renew_held(database, held, "one", 3600)
    assert all(ends is not None and ends > utcnow() + timedelta(minutes=30) for ends in expiries())


def test_a_hand_over_claims_the_head_of_the_line_else_the_handed_one(
    leases: Leases, database: Database
) -> None:
    fifth = store_submission(database, queue_rank=4)
    first = store_submission(database, queue_rank=0)
    claim = leases.claim_next(fifth, "grader")
    assert claim is not None and claim.submission_id == first  # a first submission goes ahead
    claim = leases.claim_next(first, "grader")
    assert claim is not None and claim.submission_id == fifth
    long_ago = utcnow() - timedelta(minutes=1)
    stale = store_submission(
        database, status=SubmissionStatus.RUNNING, attempts=1, started_at=long_ago,
        lease_holder="dead", lease_expires_at=long_ago,
    )  # fmt: skip
    claim = leases.claim_next(stale, "grader")  # none queued: the handed one, as the sweeper sent
    assert claim is not None and (claim.submission_id, claim.attempts) == (stale, 2)
    assert leases.claim_next(stale, "other") is None  # now under a live lease


def test_a_turn_waits_for_a_submission_whose_hand_over_is_still_being_written(
    leases: Leases, database: Database
) -> None:
    handed = store_submission(database, status=SubmissionStatus.DONE, finished_at=utcnow())
    queued = store_submission(database)  # its API is writing its lease: its row is held
    claimed: list[object] = []
    grader = threading.Thread(target=lambda: claimed.append(leases.claim_next(handed, "grader")))
    with database.session() as api:  # the lease as `Leases.dispatched` writes it, held open
        SUBMISSIONS.hold(
            api,
            queued,
            Submission.status == SubmissionStatus.QUEUED,
            DISPATCHED,
            utcnow() + timedelta(hours=1),
        )
        grader.start()
        time.sleep(0.5)  # the grader's turn comes while the row is held
    grader.join(timeout=30)
    claim = claimed[0] if claimed else None
    assert isinstance(claim, Claim) and claim.submission_id == queued  # the turn is not lost


def test_two_graders_racing_take_each_submission_once_in_line_order(
    leases: Leases, database: Database
) -> None:
    ranks = [3, 0, 2, 0, 1] * 8
    ids = [store_submission(database, queue_rank=rank) for rank in ranks]
    line = sorted(ids, key=lambda i: (ranks[ids.index(i)], i))
    taken: dict[str, list[str]] = {"one": [], "two": []}

    def grade(holder: str, handed: list[str]) -> None:
        for handed_id in handed:
            claim = leases.claim_next(handed_id, holder)
            if claim is None:  # a hand-over finds one to grade while any is queued
                taken[holder].append("nothing")
                continue
            taken[holder].append(claim.submission_id)
            with database.session() as session:
                SUBMISSIONS.drop(
                    session, Submission.id == claim.submission_id, status=SubmissionStatus.DONE
                )

    graders = [
        threading.Thread(target=grade, args=("one", ids[0::2])),
        threading.Thread(target=grade, args=("two", ids[1::2])),
    ]
    for grader in graders:
        grader.start()
    for grader in graders:
        grader.join()
    assert sorted(taken["one"] + taken["two"]) == sorted(ids)  # each once, none left behind
    for own in taken.values():
        assert own == [i for i in line if i in own]  # each in line order
