"""Requests waiting on a grading: woken by its announcement, else by re-reading the database."""

from __future__ import annotations

import asyncio
import threading

from app.grading.waiters import REMEMBERED, Waiters


class Database:
    """Stands in for the re-read: counts the reads, says done once `done` is set."""

    def __init__(self) -> None:
        self.reads = 0
        self.done = False

    async def is_done(self) -> bool:
        self.reads += 1
        return self.done


def test_a_grading_announced_before_the_wait_answers_it_without_a_read() -> None:
    waiters, database = Waiters(poll_s=60), Database()
    waiters.notify("s1")
    assert asyncio.run(waiters.wait("s1", 60, database.is_done)) is True
    assert database.reads == 0


def test_an_announcement_from_another_thread_wakes_the_wait_before_any_read() -> None:
    waiters, database = Waiters(poll_s=60), Database()

    async def wait_and_announce() -> bool:
        waiting = asyncio.ensure_future(waiters.wait("s1", 60, database.is_done))
        await asyncio.sleep(0.05)
        threading.Thread(target=waiters.notify, args=("s1",)).start()
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(wait_and_announce()) is True
    assert database.reads == 0


def test_a_lost_announcement_costs_one_poll_period() -> None:
    waiters, database = Waiters(poll_s=0.05), Database()
    database.done = True  # graded elsewhere, and its announcement never came
    assert asyncio.run(waiters.wait("s1", 60, database.is_done)) is True
    assert database.reads == 1


def test_a_wait_that_outlasts_its_timeout_says_so() -> None:
    waiters, database = Waiters(poll_s=0.05), Database()
    assert asyncio.run(waiters.wait("s1", 0.2, database.is_done)) is False
    assert 2 <= database.reads <= 5


def test_only_the_latest_announcements_are_remembered() -> None:
    waiters, database = Waiters(poll_s=0.05), Database()
    for n in range(REMEMBERED + 1):
        waiters.notify(f"s{n}")
    assert asyncio.run(waiters.wait("s0", 0.1, database.is_done)) is False
    assert asyncio.run(waiters.wait("s1", 0.1, database.is_done)) is True
