"""Supervision (layer 4): drive a child through one job and classify how it ended.

`supervise` sends the job, reads events until the run is over or the deadline passes, and the
caller kills the process group; the ending is classified from what the supervisor saw (events,
exit status, signals), never from the child's word.

The wall-clock limit is there for code that does not use the CPU (a sleep, a deadlock): the CPU
limit (RLIMIT_CPU) stops code that does. So the time a child spent waiting for a CPU that a busy
machine did not give it does not count against its wall limit (`Deadline`): its deadline moves
on by that time, up to `STARVED_CEILING` times the wall limit. A loop then ends at its CPU limit
(the student's time-out) however busy the machine, and correct code finishes. A run still short
of its wall time at that ceiling was starved: the platform's problem, never the student's
(`Execution.starved`; the grader runs it again later).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass
from typing import Protocol

from grader.contract import Execution, Job, Termination
from grader.sandbox.frames import MAX_EVENT_HEADER, FrameReader, OutputLimitExceeded, ProtocolError
from grader.sandbox.protocol import Event, ExitCode, Finished, decode_event, encode_job
from grader.sandbox.transcript import Transcript

EXIT_GRACE_S = 5.0  # for a process told to exit, before it is killed
EXIT_UNDER_WAY_S = 2.0  # for a process that closed its channel at its deadline, to be reaped
# How long a starved run may last, in wall limits: enough for a loop that gets an eighth of a CPU
# to reach its CPU limit (half the wall limit in every exercise, plus up to a second of
# RLIMIT_CPU's rounding), short enough that a grading slot is not held for long by a machine
# that cannot run it.
STARVED_CEILING = 5.0
# The shortest move of a deadline: a child that keeps waiting for a CPU is not asked again
# every few microseconds.
_SHORTEST_EXTENSION_S = 0.1
_RECEIVE_BYTES = 1 << 20

Ending = tuple[Termination, str]


@dataclass(frozen=True)
class ExitStatus:
    wait_status: int  # as os.waitpid returns it
    cpu_s: float


class ChildLost(Exception):
    """Nothing can tell any more how the child ended (its warm process died)."""


class Child(Protocol):
    """A process that runs one job, as its supervisor sees it."""

    channel: socket.socket

    def kill(self) -> None:
        """SIGKILL its process group, unless it is known to be gone."""
        ...

    def wait(self, timeout: float) -> ExitStatus | None:
        """How it ended, or None while it still runs; raises ChildLost if that cannot be known."""
        ...

    def cpu_wait_s(self) -> float | None:
        """How long its threads have waited for a CPU so far, or None if that is not known."""
        ...


def run_queue_delay_s(pid: int) -> float | None:
    """The kernel's count of the time the threads of process `pid` spent runnable but waiting
    for a CPU (the second field of each thread's schedstat, in ns); None once it is gone."""
    total_ns = 0
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/schedstat", encoding="ascii") as stats:
                total_ns += int(stats.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return total_ns / 1e9


def supervise(child: Child, job: Job) -> Execution:
    """Send `job` to `child`, follow its events to the end, kill it, and say how the run ended."""
    transcript = Transcript(job)
    deadline = Deadline(child, job.limits.wall_s)
    ending = _converse(child.channel, job, transcript, deadline)
    if ending is None:  # the channel closed before the run was over: the exit says why
        ending = _ending_after_hangup(child, job, deadline)
    starved = ending[0] is Termination.TIMEOUT and deadline.starved and _still_running(child)
    child.kill()
    return transcript.execution(*ending, starved=starved)


class Deadline:
    """When a run is out of wall-clock time: once `wall_s` have passed that the child did not
    spend waiting for a CPU, or at the ceiling (`STARVED_CEILING` times `wall_s`), whichever
    comes first. Where the kernel does not say how long the child waited, after `wall_s`."""

    def __init__(self, child: Child, wall_s: float) -> None:
        self._child = child
        self._wall_s = wall_s
        self._started = time.monotonic()
        self._waited_before = child.cpu_wait_s()  # a spare child waited a little before its job
        self._at = self._started + wall_s
        self._ceiling = self._started + wall_s * STARVED_CEILING
        self.starved = False  # it stopped at the ceiling with wall time left: the machine's doing

    def remaining(self) -> float:
        """Seconds left; raises TimeoutError once there are none."""
        left = self._at - time.monotonic()
        if left <= 0:
            left = self._extend()
        if left <= 0:
            raise TimeoutError
        return left

    def _extend(self) -> float:
        """Move the deadline on by the time the child waited for a CPU so far; returns the
        seconds now left (none: out of time)."""
        now = time.monotonic()
        waited = self._waited_s()
        if waited is None:
            return 0.0
        unused = self._wall_s - (now - self._started - waited)  # its own time left, waits aside
        if unused <= 0:
            return 0.0
        if now >= self._ceiling:
            self.starved = True
            return 0.0
        self._at = min(now + max(unused, _SHORTEST_EXTENSION_S), self._ceiling)
        return self._at - now

    def _waited_s(self) -> float | None:
        waited = self._child.cpu_wait_s()
        if waited is None or self._waited_before is None:
            return None
        return waited - self._waited_before


def _still_running(child: Child) -> bool:
    """Whether the child is still running (a child that ended by itself as the deadline passed
    hit its CPU limit: its exit says so, not the clock)."""
    try:
        return child.wait(0) is None
    except ChildLost:  # its warm process died: nothing is left to ask
        return False


def _converse(
    channel: socket.socket, job: Job, transcript: Transcript, deadline: Deadline
) -> Ending | None:
    try:
        _send(channel, encode_job(job), deadline)
        return _follow(channel, job, transcript, deadline)
    except TimeoutError:
        wall = f"was still running at the {job.limits.wall_s:g} s wall-clock limit"
        return Termination.TIMEOUT, wall
    except OutputLimitExceeded as error:
        return Termination.OUTPUT_LIMIT, str(error)
    except ProtocolError as error:
        return Termination.CRASHED, f"the sandboxed process broke the result protocol: {error}"
    except OSError:  # the channel broke: the child died, and its exit status says how
        return None


def _follow(
    channel: socket.socket, job: Job, transcript: Transcript, deadline: Deadline
) -> Ending | None:
    """Read events until the run is settled (its ending) or the channel closes (None)."""
    reader = FrameReader(MAX_EVENT_HEADER, job.limits.output_bytes)
    while data := _receive(channel, deadline):
        for frame in reader.feed(data):
            ending = _take(decode_event(frame, job), transcript)
            if ending is not None:
                return ending
    return None


def _take(event: Event, transcript: Transcript) -> Ending | None:
    exhausted = _memory_exhausted(event)
    if exhausted:
        return Termination.MEMORY, exhausted
    transcript.record(event)
    settled = transcript.settled()
    if settled is Termination.VIOLATION:
        return settled, "a runtime guard stopped the run"
    return None if settled is None else (settled, "")


def _send(channel: socket.socket, data: bytes, deadline: Deadline) -> None:
    unsent = memoryview(data)
    while unsent:  # `send`, not `sendall`: a timed-out `sendall` does not say what it sent
        channel.settimeout(deadline.remaining())
        with contextlib.suppress(TimeoutError):  # that deadline passed: it may have moved on
            unsent = unsent[channel.send(unsent) :]


def _receive(channel: socket.socket, deadline: Deadline) -> bytes:
    while True:
        channel.settimeout(deadline.remaining())
        with contextlib.suppress(TimeoutError):  # that deadline passed: it may have moved on
            return channel.recv(_RECEIVE_BYTES)


def _memory_exhausted(event: Event) -> str | None:
    """An allocation that failed inside a call ends the run as MEMORY, at that call."""
    if not isinstance(event, Finished) or event.outcome.error is None:
        return None
    error = event.outcome.error
    torch_allocator = error.type_name == "RuntimeError" and "can't allocate memory" in error.message
    if error.type_name == "MemoryError" or torch_allocator:
        return f"{error.type_name}: {error.message}"[:300]
    return None


def _ending_after_hangup(child: Child, job: Job, deadline: Deadline) -> Ending:
    try:
        status = _exit_status(child, deadline)
    except ChildLost as lost:
        return Termination.CRASHED, str(lost)
    if status is None:
        return Termination.TIMEOUT, "closed its channel and kept running past the wall-clock limit"
    return classify_exit(status, job)


def _exit_status(child: Child, deadline: Deadline) -> ExitStatus | None:
    """How a child that closed its channel ended; None if it still runs past its deadline and a
    short grace. The grace is for an exit already under way: on a busy machine, dying and being
    reaped take CPU too, and a loop that the CPU limit ended must read as that, not as a run that
    kept going."""
    try:
        while (status := child.wait(deadline.remaining())) is None:
            pass
    except TimeoutError:
        return child.wait(EXIT_UNDER_WAY_S)
    return status


def classify_exit(status: ExitStatus, job: Job) -> Ending:
    """The ending of a child that died before its run was over."""
    if os.WIFSIGNALED(status.wait_status):
        number = os.WTERMSIG(status.wait_status)
        # RLIMIT_CPU sends SIGXCPU at the soft limit and SIGKILL at the hard one.
        out_of_cpu = status.cpu_s >= job.limits.cpu_s
        if number == signal.SIGXCPU or (number == signal.SIGKILL and out_of_cpu):
            return Termination.TIMEOUT, f"used up its {job.limits.cpu_s:g} s of CPU"
        if number == signal.SIGKILL:  # not ours: we kill only once the ending is decided
            return Termination.MEMORY, "killed by SIGKILL, most likely by the out-of-memory killer"
        return Termination.CRASHED, f"killed by {_signal_name(number)}"
    code = os.WEXITSTATUS(status.wait_status)
    if code == ExitCode.VIOLATION:
        return Termination.VIOLATION, "a runtime guard stopped the run"
    if code == ExitCode.MEMORY:
        return Termination.MEMORY, "an allocation failed between calls"
    return Termination.CRASHED, f"exited with status {code} before reporting every call"


def kill_group(pid: int) -> bool:
    """SIGKILL the process group that `pid` leads; False where there is none (the process is
    gone, or has not made its group yet). The only way a sandbox kills a process group."""
    # The group only, never the pid alone: should the pid have been reaped and reused, it would
    # take a new process that leads its own group to be hit.
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        return False
    return True


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    if number == signal.SIGSYS:  # seccomp's answer to exec, ptrace and the like
        return f"{name}: a system call the sandbox forbids"
    return name
