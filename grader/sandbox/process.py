"""Jobs in hardened, supervised processes forked from a warm one (layers 2 to 4 of the design).

`WarmProcessSandbox` keeps one warm process (`grader.sandbox.warm_process`, driven through
`warm_process_client.WarmProcess`) that has imported torch and forks a spare child for each slot
ahead of time: a job pays neither the interpreter's start nor the fork, its child is already
hardened and waiting on its channel. It drives each child with `supervision.supervise`.
(`fresh.FreshInterpreterSandbox` starts a new interpreter per job instead: the benchmark's
baseline.)

One warm process serves every slot, rather than one per slot: a warm process is about 220 MB
resident, its children share those pages copy-on-write, and all it does is fork (about 10 ms, off
the request path), so one keeps up with many slots. More copies would buy no isolation: the fork
is what isolates one submission from the next. The children talk to the supervisor directly on
their own socket, so a busy slot never waits on another, and a warm process that dies loses only
the exit statuses of the runs in flight (those runs end as CRASHED; the next job restarts it).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from grader.contract import Execution, Job, Termination
from grader.errors import SandboxUnavailable
from grader.sandbox.interface import Layer
from grader.sandbox.launch import DEFAULT_PRELOAD, FORKED_PROCESS, PROCESS_LAYERS, UID_BASE, Slots
from grader.sandbox.scratch import ScratchRoot
from grader.sandbox.supervision import supervise
from grader.sandbox.warm_process_client import WarmProcess


class WarmProcessSandbox:
    """Each job in a child forked from one warm process; up to `slots` jobs at once, from any
    number of threads. The warm process starts on first use (or `layers()`), and again after
    it dies."""

    def __init__(
        self,
        slots: int = 2,
        *,
        uid_base: int = UID_BASE,
        preload: Sequence[str] = DEFAULT_PRELOAD,
        scratch_parent: str | None = None,
        huge_pages: bool = True,
    ) -> None:
        # huge_pages: the warm process collapses its memory into huge pages before its first
        # fork (grader.sandbox.huge_pages: a quarter of a second at its start, then a few ms
        # less CPU per child), worth it for a warm process that serves more than a few dozen.
        self._huge_pages = huge_pages
        self._slots = Slots(slots)
        self._uid_base = uid_base
        self._preload = tuple(preload)
        self._root = ScratchRoot(scratch_parent)  # and the roots of dead services go
        self._lock = threading.Lock()
        self._warm_process: WarmProcess | None = None
        self._runs: dict[WarmProcess, int] = {}  # runs in flight, by the warm process they use
        self._closed = False

    @property
    def parallel_runs(self) -> int:
        return self._slots.count

    def run(self, job: Job) -> Execution:
        with self._slots.take() as slot:
            warm_process = self._warm(run=True)
            try:
                child = warm_process.take_spare(slot)
                if child is None:
                    detail = "the warm process died before the run; it is being restarted"
                    return Execution(Termination.CRASHED, {}, detail=detail)
                try:
                    return supervise(child, job)
                finally:
                    warm_process.release(child)
            finally:
                self._end_run(warm_process, slot)

    def preload(self, modules: Sequence[str]) -> None:
        """Preload these too from now on (an exercise added on a running service may allow a
        library no warm process has imported, and a confined child can import nothing). A warm
        process that lacks one is retired: the next job starts a new one, and the runs in
        flight end in the old one, which stops after the last of them."""
        with self._lock:
            if set(modules) <= set(self._preload):
                return
            self._preload = tuple(sorted({*self._preload, *modules}))
            retired, self._warm_process = self._warm_process, None
            idle = retired is not None and retired not in self._runs
        if retired is not None and idle:
            retired.close()

    def _end_run(self, warm_process: WarmProcess, slot: int) -> None:
        with self._lock:
            self._runs[warm_process] -= 1
            if not self._runs[warm_process]:
                del self._runs[warm_process]
            current = warm_process is self._warm_process
            retired_and_idle = not current and warm_process not in self._runs
        if current:
            warm_process.request_spare(slot)
        elif retired_and_idle:
            warm_process.close()

    def layers(self) -> list[Layer]:
        return [FORKED_PROCESS, *self._warm().layers, *PROCESS_LAYERS]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            warm_process, self._warm_process = self._warm_process, None
        if warm_process is not None:
            warm_process.close()
        self._root.close()

    def _warm(self, *, run: bool = False) -> WarmProcess:
        """The live warm process, started (or restarted) here if need be, with a spare per slot;
        `run`: counted as used by a run until `_end_run`."""
        with self._lock:
            if self._closed:
                raise SandboxUnavailable("the sandbox is closed")
            if self._warm_process is None or not self._warm_process.alive:
                if self._warm_process is not None:
                    self._warm_process.close()
                self._warm_process = WarmProcess.start(
                    self._root.path, self._uid_base, self._preload, self._huge_pages
                )
                for slot in range(self._slots.count):
                    self._warm_process.request_spare(slot)
            if run:
                self._runs[self._warm_process] = self._runs.get(self._warm_process, 0) + 1
            return self._warm_process
