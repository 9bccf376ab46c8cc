"""The benchmark's baseline: a new interpreter per job, hardened and supervised the same way."""

from __future__ import annotations

import os
import select
import socket
from collections.abc import Sequence

from grader.contract import Execution, Job
from grader.sandbox.hardening import slot_uid
from grader.sandbox.interface import Layer
from grader.sandbox.launch import DEFAULT_PRELOAD, PROCESS_LAYERS, UID_BASE, Slots, start_python
from grader.sandbox.probe import probe
from grader.sandbox.scratch import ScratchRoot, make_scratch, remove_scratch
from grader.sandbox.supervision import ExitStatus, kill_group, run_queue_delay_s, supervise


class _Interpreter:
    """A new `python` running one job (the warm process module's `single`), hardened as a forked
    child would be."""

    def __init__(self, scratch: str, slot: int, uid_base: int, preload: Sequence[str]) -> None:
        self.channel, theirs = socket.socketpair()
        self.process = start_python(
            "single",
            scratch,
            theirs.fileno(),
            fd_name="channel_fd",
            uid_base=uid_base,
            preload=preload,
            slot=slot,
        )
        theirs.close()
        self._status: ExitStatus | None = None

    def kill(self) -> None:
        if self._status is None:  # not reaped yet, so the pid is still its own
            kill_group(self.process.pid)

    def wait(self, timeout: float | None) -> ExitStatus | None:
        if self._status is None:
            pidfd = os.pidfd_open(self.process.pid)
            try:
                if select.select([pidfd], [], [], timeout)[0]:
                    _, status, usage = os.wait4(self.process.pid, 0)
                    self.process.returncode = os.waitstatus_to_exitcode(status)
                    self._status = ExitStatus(status, usage.ru_utime + usage.ru_stime)
            finally:
                os.close(pidfd)
        return self._status

    def cpu_wait_s(self) -> float | None:
        return None if self._status is not None else run_queue_delay_s(self.process.pid)

    def close(self) -> None:
        self.kill()
        self.wait(None)
        self.channel.close()


class FreshInterpreterSandbox:
    """Each job in a new interpreter, hardened the same way: what a grader without a warm
    process pays (about 1.5 s of imports per job). The benchmark's baseline, not for serving."""

    def __init__(
        self,
        slots: int = 2,
        *,
        uid_base: int = UID_BASE,
        preload: Sequence[str] = DEFAULT_PRELOAD,
        scratch_parent: str | None = None,
    ) -> None:
        self._slots = Slots(slots)
        self._uid_base = uid_base
        self._preload = tuple(preload)
        self._root = ScratchRoot(scratch_parent)
        self._probed: list[Layer] | None = None

    @property
    def parallel_runs(self) -> int:
        return self._slots.count

    def run(self, job: Job) -> Execution:
        with self._slots.take() as slot:
            scratch = make_scratch(self._root.path, slot_uid(self._uid_base, slot))
            child = _Interpreter(scratch, slot, self._uid_base, self._preload)
            try:
                return supervise(child, job)
            finally:
                child.close()  # killed and reaped: its group is dead
                remove_scratch(scratch)

    def layers(self) -> list[Layer]:
        if self._probed is None:
            self._probed = probe(self._uid_base, self._root.path)
        fresh = Layer("process", True, "a new interpreter per submission, scrubbed environment")
        return [fresh, *self._probed, *PROCESS_LAYERS]

    def close(self) -> None:
        self._root.close()
