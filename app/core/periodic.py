"""A background thread that does one thing every period: renew leases, sweep, send the outbox.

The first run is at start. `wake()` runs it again at once (the outbox sender, when a report was
just stored); `close()` stops it after the run in progress. A run that raises is logged and the
next period tries again: these loops keep work moving, they must not die with one failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    def __init__(self, name: str, period_s: float, run: Callable[[], object]) -> None:
        self._name = name
        self._period_s = period_s
        self._run = run
        self._wakeup = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wakeup.set()

    def close(self, timeout_s: float = 5.0) -> None:
        self._closed.set()
        self._wakeup.set()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout_s)

    def _loop(self) -> None:
        while not self._closed.is_set():
            try:
                self._run()
            except Exception:  # the database or Redis away: the next period tries again
                log.exception("%s failed; trying again in %g s", self._name, self._period_s)
            self._wakeup.wait(self._period_s)
            self._wakeup.clear()
