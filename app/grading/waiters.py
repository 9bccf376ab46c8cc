"""Wake the requests waiting on a submission (POST ?wait=true, GET ?wait=S) when its grading ends.

Grading in this process calls `notify(id)` the moment a report is stored. A submission graded
elsewhere (a Celery worker) is announced over Redis (app.scaleout.notify), and an announcement
can be lost, so every `poll_s` the process asks the database once which of all the submissions
waited on in it are finished, and wakes those: prompt when announced, correct always. One
question for all, not one per waiter: a class of 1,000 waiting would otherwise cost 500 reads
a second, more than the gradings they wait for.

A grading can end between the request storing its submission and it starting to wait: the last
`REMEMBERED` announcements are kept, and a waiter that registers after its own is answered from
them, without reading the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus

log = logging.getLogger(__name__)

REMEMBERED = 4096

# Given the ids waited on, the ones finished (done, or gone); runs in a worker thread.
FinishedAmong = Callable[[Collection[str]], Collection[str]]
_Entry = tuple[asyncio.AbstractEventLoop, asyncio.Event]


def finished_among(database: Database) -> FinishedAmong:
    """The database's answer: one statement for any number of ids."""

    def finished(ids: Collection[str]) -> set[str]:
        with database.session() as session:
            unfinished = session.scalars(
                select(Submission.id).where(
                    Submission.id.in_(ids), Submission.status != SubmissionStatus.DONE
                )
            )
            return set(ids) - set(unfinished)

    return finished


class Waiters:
    def __init__(self, poll_s: float, finished: FinishedAmong) -> None:
        self.poll_s = poll_s
        self._finished = finished
        self._waiters: dict[str, list[_Entry]] = {}
        self._announced: OrderedDict[str, None] = OrderedDict()  # oldest first
        self._checks: dict[asyncio.AbstractEventLoop, asyncio.Task[None]] = {}
        self._lock = threading.Lock()

    def notify(self, submission_id: str) -> None:
        """Thread-safe; called from grading threads."""
        with self._lock:
            waiters = self._waiters.pop(submission_id, [])
            self._announced[submission_id] = None
            if len(self._announced) > REMEMBERED:
                self._announced.popitem(last=False)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that request's loop has closed
                loop.call_soon_threadsafe(event.set)

    def waiting(self) -> int:
        """How many requests wait now."""
        with self._lock:
            return sum(len(entries) for entries in self._waiters.values())

    async def wait(self, submission_id: str, timeout_s: float) -> bool:
        """Return True once the submission is announced or found finished, False when
        `timeout_s` passes first."""
        loop = asyncio.get_running_loop()
        entry = (loop, asyncio.Event())
        with self._lock:  # registered before waiting: a notify in between is not missed
            if submission_id in self._announced:
                return True
            self._waiters.setdefault(submission_id, []).append(entry)
            self._start_checks(loop)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(entry[1].wait(), timeout_s)
            return entry[1].is_set()
        finally:
            self._forget(submission_id, entry)

    def _start_checks(self, loop: asyncio.AbstractEventLoop) -> None:
        """One checking task per event loop with waiters (a server has one); it ends when they
        are gone. Called under the lock."""
        if loop not in self._checks:
            self._checks[loop] = loop.create_task(self._check_while_waited_on(loop))

    async def _check_while_waited_on(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while await self._check_once(loop):
                pass
        finally:  # also when the loop is closed under it
            with self._lock:
                if self._checks.get(loop) is asyncio.current_task():
                    del self._checks[loop]

    async def _check_once(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Wake the finished ones of this loop's waiters after a poll period; False when there
        are none left to check for."""
        await asyncio.sleep(self.poll_s)
        with self._lock:
            ids = [id_ for id_, entries in self._waiters.items() if _in(loop, entries)]
            if not ids:
                del self._checks[loop]  # under the lock: the next waiter starts a new one
                return False
        try:
            finished = await asyncio.to_thread(self._finished, ids)
        except SQLAlchemyError:  # the database is busy or away: ask again next period
            log.warning("could not check which waited-on submissions are finished", exc_info=True)
            return True
        for submission_id in finished:
            self.notify(submission_id)
        return True

    def _forget(self, submission_id: str, entry: _Entry) -> None:
        with self._lock:
            waiters = self._waiters.get(submission_id, [])
            if entry in waiters:
                waiters.remove(entry)
            if not waiters:
                self._waiters.pop(submission_id, None)


def _in(loop: asyncio.AbstractEventLoop, entries: list[_Entry]) -> bool:
    return any(entry_loop is loop for entry_loop, _ in entries)
