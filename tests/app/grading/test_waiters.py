"""Requests waiting on a grading: woken by its announcement, else by one check of the database
per poll period for all of a process's waiters at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Collection
from typing import Any

from app_support import store_submission
from sqlalchemy import event, update

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus
from app.grading.waiters import REMEMBERED, Waiters, finished_among


class Finished:
    """Stands in for the database: counts the checks, and answers the ids in `done`."""

    def __init__(self) -> None:
        self.checks: list[list[str]] = []
        self.done: set[str] = set()

    def __call__(self, ids: Collection[str]) -> set[str]:
        self.checks.append(sorted(ids))
        return self.done & set(ids)


def test_a_grading_announced_before_the_wait_answers_it_without_a_check() -> None:
    finished = Finished()
    waiters = Waiters(poll_s=60, finished=finished)
    waiters.notify("s1")
    assert asyncio.run(waiters.wait("s1", 60)) is True
    assert finished.checks == []


def test_an_announcement_from_another_thread_wakes_the_wait_before_any_check() -> None:
    finished = Finished()
    waiters = Waiters(poll_s=60, finished=finished)

    async def wait_and_announce() -> bool:
        waiting = asyncio.ensure_future(waiters.wait("s1", 60))
        await asyncio.sleep(0.05)
        threading.Thread(target=waiters.notify, args=("s1",)).start()
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(wait_and_announce()) is True
    assert finished.checks == []


def test_a_lost_announcement_costs_one_poll_period() -> None:
    finished = Finished()
    finished.done = {"s1"}  # graded elsewhere, and its announcement never came
    waiters = Waiters(poll_s=0.05, finished=finished)
    assert asyncio.run(waiters.wait("s1", 60)) is True
    assert finished.checks == [["s1"]]


def test_a_wait_that_outlasts_its_timeout_says_so() -> None:
    finished = Finished()
    waiters = Waiters(poll_s=0.05, finished=finished)
    assert asyncio.run(waiters.wait("s1", 0.2)) is False
    assert 2 <= len(finished.checks) <= 5


def test_only_the_latest_announcements_are_remembered() -> None:
    waiters = Waiters(poll_s=0.05, finished=Finished())
    for n in range(REMEMBERED + 1):
        waiters.notify(f"s{n}")
    assert asyncio.run(waiters.wait("s0", 0.1)) is False
    assert asyncio.run(waiters.wait("s1", 0.1)) is True


def test_many_waiters_cost_one_check_per_period_and_each_is_woken_once_finished() -> None:
    finished = Finished()
    waiters = Waiters(poll_s=0.05, finished=finished)
    ids = [f"s{n}" for n in range(50)]

    async def wait_for_all() -> list[bool]:
        waiting = [asyncio.ensure_future(waiters.wait(id_, 60)) for id_ in ids]
        await asyncio.sleep(0)  # all registered
        finished.done = set(ids)
        return await asyncio.gather(*waiting)

    assert asyncio.run(wait_for_all()) == [True] * 50
    assert finished.checks == [sorted(ids)]


def test_the_database_check_is_one_statement_for_all_waiters(database: Database) -> None:
    """A class waiting in one process costs one read per poll period, and a submission graded
    elsewhere (its announcement lost) still wakes its waiter at the next check."""
    queued = [store_submission(database) for _ in range(20)]
    graded = store_submission(database, status=SubmissionStatus.DONE)
    waiters = Waiters(poll_s=0.05, finished=finished_among(database))
    reads: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            reads.append(statement)

    async def wait_for_all() -> list[bool]:
        waiting = [asyncio.ensure_future(waiters.wait(id_, 60)) for id_ in queued]
        first = await waiters.wait(graded, 60)  # woken by the first check
        with database.session() as session:  # the rest graded elsewhere, unannounced
            session.execute(update(Submission).values(status=SubmissionStatus.DONE))
        return [first, *await asyncio.gather(*waiting)]  # woken by the second

    event.listen(database.engine, "before_cursor_execute", count)
    try:
        outcomes = asyncio.run(wait_for_all())
    finally:
        event.remove(database.engine, "before_cursor_execute", count)
    assert outcomes == [True] * 21
    assert len(reads) == 2, reads
