"""The line of queued submissions: a place by (queue_rank, id) among the queued only, and an
estimate from the recent pace of grading, or none without one."""

from __future__ import annotations

from datetime import timedelta

from app_support import load_submission, store_submission

from app.core.db import Database
from app.core.models import SubmissionStatus, utcnow
from app.grading.line import Line, Place


def place_of(database: Database, submission_id: str) -> Place | None:
    with database.session() as session:
        return Line().place(session, load_submission(database, submission_id))


def test_the_place_in_line_follows_the_rank_then_the_order_of_arrival(database: Database) -> None:
    resubmitted = store_submission(database, queue_rank=2)
    first = store_submission(database, queue_rank=0)
    second_try = store_submission(database, queue_rank=1)
    first_too = store_submission(database, queue_rank=0)
    store_submission(database, status=SubmissionStatus.RUNNING, queue_rank=0)  # not in line
    places = [place_of(database, id_) for id_ in (first, first_too, second_try, resubmitted)]
    assert [place.position for place in places if place] == [1, 2, 3, 4]


def test_a_running_or_graded_submission_has_no_place(database: Database) -> None:
    running = store_submission(database, status=SubmissionStatus.RUNNING)
    graded = store_submission(database, status=SubmissionStatus.DONE, finished_at=utcnow())
    assert place_of(database, running) is None
    assert place_of(database, graded) is None


def test_without_recent_gradings_there_is_no_estimate(database: Database) -> None:
    long_ago = utcnow() - timedelta(hours=1)
    for n in range(3):
        store_submission(
            database, status=SubmissionStatus.DONE, finished_at=long_ago + timedelta(seconds=n)
        )
    queued = store_submission(database)
    assert place_of(database, queued) == Place(position=1, estimate_s=None)


def test_the_estimate_is_the_place_over_the_recent_pace(database: Database) -> None:
    now = utcnow()
    for n in range(11):  # ten gradings' worth of intervals in 5 s: 2 a second
        finished = now - timedelta(seconds=n * 0.5)
        store_submission(database, status=SubmissionStatus.DONE, finished_at=finished)
    ahead = store_submission(database)
    queued = store_submission(database)
    assert place_of(database, ahead) == Place(position=1, estimate_s=0.5)
    assert place_of(database, queued) == Place(position=2, estimate_s=1.0)


def test_an_estimate_comes_as_soon_as_two_are_graded(database: Database) -> None:
    line = Line()  # one per process: what it read is kept for the next ask
    queued = store_submission(database)
    with database.session() as session:
        assert line.place(session, load_submission(database, queued)) == Place(1, None)
    now = utcnow()
    for n in range(2):
        finished = now - timedelta(seconds=n * 0.5)
        store_submission(database, status=SubmissionStatus.DONE, finished_at=finished)
    with database.session() as session:
        assert line.place(session, load_submission(database, queued)) == Place(1, 0.5)
