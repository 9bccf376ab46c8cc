"""How the supervisor ends a run that is out of wall-clock time: the student's time-out, unless
the machine gave it no CPU (`starved`). Driven by fake children whose CPU waits follow the clock;
the real sandbox under a busy machine is in test_busy_machine.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from grader.contract import Call, CallOutcome, Execution, Job, OutputValue, Policy, Termination
from grader.limits import SandboxLimits
from grader.sandbox.protocol import Finished, Started, encode_event
from grader.sandbox.supervision import STARVED_CEILING, ExitStatus, run_queue_delay_s, supervise

WALL_S = 0.4
X = np.ones((2, 3), np.float32)
JOB = Job(
    source="class M: ...",
    entry_point="M",
    kind="module",
    framework="torch",
    policy=Policy(("torch",)),
    calls=(Call("first", (X,)), Call("second", (X,))),
    limits=SandboxLimits(wall_s=WALL_S, cpu_s=0.2),
)
EVERY_CALL = b"".join(
    encode_event(event)
    for call in JOB.calls
    for event in (
        Started(call.id),
        Finished(CallOutcome(call.id, (OutputValue("Tensor", X, "torch.float32", (2, 3)),))),
    )
)


class ClockChild:
    """A child that, from its birth, waits for a CPU for `waiting` of the time (None: the kernel
    does not say), and reports every call once `answers_after_s` have passed (None: never)."""

    def __init__(self, waiting: float | None, answers_after_s: float | None = None) -> None:
        self.channel, self._peer = socket.socketpair()
        self.waiting = waiting
        self._born = time.monotonic()
        self._answered = threading.Event()
        self._killed = threading.Event()
        self._writer = threading.Thread(target=self._answer, args=(answers_after_s,))
        self._writer.start()

    def _answer(self, after_s: float | None) -> None:
        if after_s is None or self._killed.wait(after_s):
            return
        self._peer.sendall(EVERY_CALL)
        self._answered.set()

    def kill(self) -> None:
        self._killed.set()

    def wait(self, timeout: float) -> ExitStatus | None:
        return ExitStatus(wait_status=0, cpu_s=0.01) if self._answered.wait(timeout) else None

    def cpu_wait_s(self) -> float | None:
        return None if self.waiting is None else self.waiting * (time.monotonic() - self._born)

    def close(self) -> None:
        self.kill()
        self._writer.join()
        self._peer.close()
        self.channel.close()


@pytest.fixture
def supervised() -> Iterator[list[ClockChild]]:
    children: list[ClockChild] = []
    yield children
    for child in children:
        child.close()


def run(
    children: list[ClockChild], waiting: float | None, answers_after_s: float | None = None
) -> Execution:
    child = ClockChild(waiting, answers_after_s)
    children.append(child)
    return supervise(child, JOB)


@pytest.mark.parametrize("waiting", [None, 0.0, 0.1])
def test_a_run_that_had_its_cpu_and_did_not_finish_is_the_student_s_time_out(
    supervised: list[ClockChild], waiting: float | None
) -> None:
    """A sleep, a deadlock, or code on a machine that let it run (or that does not say)."""
    execution = run(supervised, waiting)
    assert execution.termination is Termination.TIMEOUT
    assert not execution.starved


def test_a_run_that_waited_for_a_cpu_most_of_its_time_still_times_out_on_its_own_time(
    supervised: list[ClockChild],
) -> None:
    """Given back its waits, it runs out of its own wall time before the ceiling: the code's."""
    assert STARVED_CEILING > 1 / (1 - 0.75)
    execution = run(supervised, waiting=0.75)
    assert execution.termination is Termination.TIMEOUT
    assert not execution.starved


def test_a_run_that_waited_for_a_cpu_gets_that_time_back_and_finishes(
    supervised: list[ClockChild],
) -> None:
    """Past its wall limit by the clock, within it by its own time: its verdict is its code's."""
    execution = run(supervised, waiting=0.75, answers_after_s=2 * WALL_S)
    assert execution.termination is Termination.COMPLETED
    assert set(execution.outcomes) == {call.id for call in JOB.calls}


def test_a_run_that_never_got_a_cpu_is_starved_at_the_ceiling(
    supervised: list[ClockChild],
) -> None:
    execution = run(supervised, waiting=1.0)
    assert execution.termination is Termination.TIMEOUT
    assert execution.starved


class DyingChild(ClockChild):
    """A child that the CPU limit ends just before its wall deadline (its channel closes then)
    and that a busy machine reaps only after the deadline."""

    def __init__(self, hangs_up_after_s: float, reaped_after_s: float) -> None:
        super().__init__(waiting=0.0)
        self._reaped_at = time.monotonic() + reaped_after_s
        self._hangup = threading.Timer(hangs_up_after_s, self._peer.shutdown, (socket.SHUT_RDWR,))
        self._hangup.start()

    def wait(self, timeout: float) -> ExitStatus | None:
        time.sleep(min(max(self._reaped_at - time.monotonic(), 0.0), timeout))
        if time.monotonic() < self._reaped_at:
            return None
        return ExitStatus(wait_status=signal.SIGXCPU, cpu_s=1.0)

    def close(self) -> None:
        self._hangup.cancel()
        self._hangup.join()
        super().close()


def test_a_run_the_cpu_limit_ended_reads_so_though_it_was_reaped_after_its_deadline(
    supervised: list[ClockChild],
) -> None:
    child = DyingChild(hangs_up_after_s=0.9 * WALL_S, reaped_after_s=WALL_S + 0.3)
    supervised.append(child)
    execution = supervise(child, JOB)
    assert execution.termination is Termination.TIMEOUT
    assert "used up its 0.2 s of CPU" in execution.detail


def test_the_kernel_counts_how_long_a_process_waited_for_a_cpu() -> None:
    waited = run_queue_delay_s(os.getpid())
    assert waited is not None and waited >= 0
    child = subprocess.Popen(["true"])
    child.wait()
    assert run_queue_delay_s(child.pid) is None  # gone: nothing to read
