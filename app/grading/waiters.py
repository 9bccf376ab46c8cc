"""Wake the requests waiting on a submission (POST ?wait=true) when its grading ends.

Grading in this process calls `notify(id)` the moment a report is stored. A submission graded
elsewhere (a Celery worker) is announced over Redis (app.scaleout.notify), and an announcement
can be lost, so a waiter also re-reads the database every `poll_s`: prompt when announced,
correct always. Not more often: under load a class's waiters polling every quarter second cost
more database reads than the gradings they wait for.

A grading can end between the request storing its submission and it starting to wait: the last
`REMEMBERED` announcements are kept, and a waiter that registers after its own is answered from
them, without reading the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

REMEMBERED = 4096


class Waiters:
    def __init__(self, poll_s: float) -> None:
        self.poll_s = poll_s
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._announced: OrderedDict[str, None] = OrderedDict()  # oldest first
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

    async def wait(
        self, submission_id: str, timeout_s: float, is_done: Callable[[], Awaitable[bool]]
    ) -> bool:
        """Return True once the submission is announced or `is_done()` says so, False when
        `timeout_s` passes first."""
        deadline = time.monotonic() + timeout_s
        while True:
            event = asyncio.Event()
            entry = (asyncio.get_running_loop(), event)
            with self._lock:  # registered before waiting: a notify in between is not missed
                if submission_id in self._announced:
                    return True
                self._waiters.setdefault(submission_id, []).append(entry)
            try:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), min(self.poll_s, remaining))
                if event.is_set() or await is_done():
                    return True
            finally:
                with self._lock:
                    waiters = self._waiters.get(submission_id, [])
                    if entry in waiters:
                        waiters.remove(entry)
                    if not waiters:
                        self._waiters.pop(submission_id, None)
