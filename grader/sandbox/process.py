"""Jobs in hardened, supervised processes (layers 2 to 4 of the design).

`ForkServerSandbox` keeps one warm process (`grader.sandbox.zygote`) that has imported torch and
forks a spare child for each slot ahead of time: a job pays neither the interpreter's start nor
the fork, its child is already hardened and waiting on its channel. `FreshInterpreterSandbox`
starts a new interpreter per job instead, as the benchmark's baseline. Both drive their children
with `supervise`: send the job, read events until the run is over or the deadline passes, kill the
process group, and classify the ending from what the supervisor saw, never from the child's word.

One warm process serves every slot, rather than one per slot: a warm process is about 220 MB
resident, its children share those pages copy-on-write, and all it does is fork (about 10 ms, off
the request path), so one keeps up with many slots. More copies would buy no isolation: the fork
is what isolates one submission from the next. The children talk to the supervisor directly on
their own socket, so a busy slot never waits on another, and a warm process that dies loses only
the exit statuses of the runs in flight (those runs end as CRASHED; the next job restarts it).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from grader.errors import SandboxUnavailable
from grader.sandbox.frames import MAX_EVENT_HEADER, FrameReader, OutputLimitExceeded, ProtocolError
from grader.sandbox.hardening import protect_supervisor, slot_uid
from grader.sandbox.interface import Layer
from grader.sandbox.job import Execution, Job, Termination
from grader.sandbox.protocol import Event, ExitCode, Finished, decode_event, encode_job
from grader.sandbox.scratch import ScratchRoot, make_scratch, remove_scratch
from grader.sandbox.transcript import Transcript

# The warm process's entire environment: nothing of ours (no AUTOGRADER_* secret, no database URL,
# no proxy). One thread for every math library, so numpy's OpenBLAS starts no pool at import
# (see zygote.load_runtime for why the warm process must stay single-threaded).
_ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "LC_ALL": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# The libraries submissions may import, imported by the warm process with what each brings (a
# confined child cannot import): the union of the exercises' `allowed_imports`.
DEFAULT_PRELOAD = ("torch", "numpy")
_START_TIMEOUT_S = 120.0  # importing torch on a cold, busy machine
_SPARE_TIMEOUT_S = 30.0  # a warm process that cannot fork within this is wedged
_EXIT_GRACE_S = 5.0
_RECEIVE_BYTES = 1 << 20

_PROCESS_LAYERS = (
    Layer("channel", True, "results come back as validated frames; nothing is unpickled"),
    Layer("supervision", True, "wall-clock deadline, kill of the process group, output cap"),
)

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


def supervise(child: Child, job: Job) -> Execution:
    """Send `job` to `child`, follow its events to the end, kill it, and say how the run ended."""
    transcript = Transcript(job)
    deadline = time.monotonic() + job.limits.wall_s
    ending = _converse(child.channel, job, transcript, deadline)
    if ending is None:  # the channel closed before the run was over: the exit says why
        ending = _ending_after_hangup(child, job, deadline)
    child.kill()
    return transcript.execution(*ending)


def _converse(
    channel: socket.socket, job: Job, transcript: Transcript, deadline: float
) -> Ending | None:
    try:
        _send(channel, encode_job(job), deadline)
        return _follow(channel, job, transcript, deadline)
    except TimeoutError:
        return Termination.TIMEOUT, f"still running at the {job.limits.wall_s:g} s wall-clock limit"
    except OutputLimitExceeded as error:
        return Termination.OUTPUT_LIMIT, str(error)
    except ProtocolError as error:
        return Termination.CRASHED, f"the sandboxed process broke the result protocol: {error}"
    except OSError:  # the channel broke: the child died, and its exit status says how
        return None


def _follow(
    channel: socket.socket, job: Job, transcript: Transcript, deadline: float
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


def _send(channel: socket.socket, data: bytes, deadline: float) -> None:
    channel.settimeout(_remaining(deadline))
    channel.sendall(data)


def _receive(channel: socket.socket, deadline: float) -> bytes:
    channel.settimeout(_remaining(deadline))
    return channel.recv(_RECEIVE_BYTES)


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def _memory_exhausted(event: Event) -> str | None:
    """An allocation that failed inside a call ends the run as MEMORY, at that call."""
    if not isinstance(event, Finished) or event.outcome.error is None:
        return None
    error = event.outcome.error
    torch_allocator = error.type_name == "RuntimeError" and "can't allocate memory" in error.message
    if error.type_name == "MemoryError" or torch_allocator:
        return f"{error.type_name}: {error.message}"[:300]
    return None


def _ending_after_hangup(child: Child, job: Job, deadline: float) -> Ending:
    try:
        status = child.wait(max(deadline - time.monotonic(), 0.0))
    except ChildLost as lost:
        return Termination.CRASHED, str(lost)
    if status is None:
        return Termination.TIMEOUT, "closed its channel and kept running past the wall-clock limit"
    return classify_exit(status, job)


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


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    if number == signal.SIGSYS:  # seccomp's answer to exec, ptrace and the like
        return f"{name}: a system call the sandbox forbids"
    return name


class _Slots:
    """Numbered places for runs at once; each slot has its own uid and its own spare child."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(count):
            self._free.put(slot)

    @contextmanager
    def take(self) -> Iterator[int]:
        slot = self._free.get()
        try:
            yield slot
        finally:
            self._free.put(slot)


def _zygote_argv(command: str, **options: object) -> list[str]:
    """`python -m grader.sandbox.zygote COMMAND --OPTION VALUE...`"""
    # -I: isolated mode, so no PYTHON* variable, user site or working directory shapes imports.
    argv = [sys.executable, "-I", "-m", "grader.sandbox.zygote", command]
    for name, value in options.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv


def _start_python(command: str, cwd: str, fd: int, **options: object) -> subprocess.Popen[bytes]:
    """The zygote module's `command`, handed descriptor `fd`, in a session of its own (so a
    Ctrl-C meant for the service does not reach it)."""
    return subprocess.Popen(
        _zygote_argv(command, **options),
        env=_ENVIRONMENT,
        cwd=cwd,
        pass_fds=[fd],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


# --- the fork server ----------------------------------------------------------------------------


@dataclass
class _ForkedChild:
    pid: int
    channel: socket.socket
    pidfd: int  # from the warm process: readable once the child is dead, whoever reaps it
    scratch: str
    zygote: _Zygote = field(repr=False)
    released: bool = False  # its run is over, or it will never have one

    def kill(self) -> None:
        self.zygote.kill(self)

    def wait(self, timeout: float) -> ExitStatus | None:
        return self.zygote.wait_exit(self.pid, timeout)


class _Zygote:
    """One warm process, and a thread that reads what it says.

    The warm process reaps its children and removes their scratch dirs. A child it did not live
    to reap is cleaned up after here, once the child is dead: at the end of its run, or at once
    for those whose runs were over (`_clean_up_after`).
    """

    def __init__(
        self, process: subprocess.Popen[bytes], control: socket.socket, layers: list[Layer]
    ) -> None:
        self.process = process
        self.layers = layers
        self._control = control
        self._changed = threading.Condition()
        self.alive = True
        self._asked: set[int] = set()  # slots with a spare on its way or waiting
        self._spares: dict[int, _ForkedChild] = {}
        self._children: dict[int, _ForkedChild] = {}  # each until both reaped and released
        self._exits: dict[int, ExitStatus] = {}  # of children reaped (scratch dir removed)
        self._reader = threading.Thread(target=self._read, name="zygote-reader", daemon=True)
        self._reader.start()

    @classmethod
    def start(cls, root: str, uid_base: int, preload: Sequence[str]) -> _Zygote:
        protect_supervisor()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = _start_python(
            "serve",
            root,
            theirs.fileno(),
            uid_base=uid_base,
            preload=",".join(preload),
            scratch=root,
            control_fd=theirs.fileno(),
        )
        theirs.close()
        ours.settimeout(_START_TIMEOUT_S)
        try:
            ready = json.loads(ours.recv(1 << 16))["ready"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            process.kill()
            process.wait()
            ours.close()
            raise SandboxUnavailable(
                f"the warm process did not start (exit status {process.returncode}): {error!r}"
            ) from None
        ours.settimeout(None)
        return cls(process, ours, [Layer(**fields) for fields in ready])

    def request_spare(self, slot: int) -> None:
        """Have a child forked for `slot` now, unless one is already on its way."""
        with self._changed:
            if self.alive and slot not in self._asked:
                self._asked.add(slot)
                with contextlib.suppress(OSError):  # it just died: the reader will notice
                    self._control.send(json.dumps({"spawn": slot}).encode())

    def take_spare(self, slot: int) -> _ForkedChild | None:
        """The slot's spare child; None if the warm process died or is wedged."""
        self.request_spare(slot)
        with self._changed:
            ready = self._changed.wait_for(
                lambda: slot in self._spares or not self.alive, _SPARE_TIMEOUT_S
            )
            if ready and self.alive:
                self._asked.discard(slot)
                return self._spares.pop(slot)
        self.process.kill()  # wedged, or already dead: the next run starts a new one
        return None

    def wait_exit(self, pid: int, timeout: float) -> ExitStatus | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exits or not self.alive, timeout)
            if pid in self._exits:
                return self._exits[pid]
            if not self.alive:
                raise ChildLost("the warm process died while its child ran")
            return None

    def kill(self, child: _ForkedChild) -> None:
        with self._changed:
            if child.pid not in self._exits:
                _kill_unless_dead(child)

    def release(self, child: _ForkedChild) -> None:
        """Forget a child whose run is over (it was killed), once its scratch dir is gone."""
        child.channel.close()
        with self._changed:
            child.released = True
            if child.pid in self._exits:  # reaped, its directory removed
                self._forget(child)
                return
            orphaned = not self.alive  # else the warm process will reap it and say so
            if orphaned:
                self._forget(child, keep_pidfd=True)
        if orphaned:
            _clean_up_after(child)

    def close(self) -> None:
        """Stop the warm process; it kills its children when its control socket closes."""
        with contextlib.suppress(OSError):  # already disconnected
            self._control.shutdown(socket.SHUT_RDWR)
        try:
            self.process.wait(_EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join()
        self._control.close()

    def _read(self) -> None:
        try:
            while True:
                message, fds, _, _ = socket.recv_fds(self._control, 1 << 16, 2)
                if not message:
                    return
                self._handle(json.loads(message), fds)
        except OSError:
            return
        finally:
            self._on_death()

    def _handle(self, message: dict[str, Any], fds: list[int]) -> None:
        with self._changed:
            if "spawned" in message:
                pid, channel = int(message["spawned"]), socket.socket(fileno=fds[0])
                spare = _ForkedChild(pid, channel, fds[1], str(message["scratch"]), self)
                self._children[pid] = spare
                self._spares[int(message["slot"])] = spare
            elif (reaped := self._children.get(int(message["exited"]))) is not None:
                status = ExitStatus(int(message["status"]), float(message["cpu_s"]))
                self._exits[reaped.pid] = status
                if reaped.released:
                    self._forget(reaped)
            self._changed.notify_all()

    def _forget(self, child: _ForkedChild, keep_pidfd: bool = False) -> None:
        del self._children[child.pid]
        self._exits.pop(child.pid, None)
        if not keep_pidfd:
            os.close(child.pidfd)

    def _on_death(self) -> None:
        with self._changed:
            self.alive = False
            for spare in self._spares.values():
                _kill_unless_dead(spare)
                spare.channel.close()
                spare.released = True
            self._spares.clear()
            # Children left unreaped whose runs are over: nobody else will clean up after them.
            # Those still running are cleaned up after when their runs end (`release`).
            orphans = [child for child in self._children.values() if child.released]
            for orphan in orphans:
                self._forget(orphan, keep_pidfd=True)
            self._changed.notify_all()
        for orphan in orphans:
            _clean_up_after(orphan)


def _kill_group(pid: int) -> None:
    # The group only, never the pid alone: should the pid have been reaped and reused, it would
    # take a new process that leads its own group to be hit.
    with contextlib.suppress(OSError):  # gone already
        os.killpg(pid, signal.SIGKILL)


def _dead(pidfd: int, timeout_s: float) -> bool:
    """Whether the process has exited, waiting up to `timeout_s` for it."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(timeout_s * 1000))


def _kill_unless_dead(child: _ForkedChild) -> None:
    # Once dead it may be reaped at any moment, and its pid then belongs to someone else.
    if not _dead(child.pidfd, 0):
        _kill_group(child.pid)


def _clean_up_after(child: _ForkedChild) -> None:
    """What the warm process does for a child, for one it did not live to reap: kill its group,
    and remove its scratch dir once it is dead. Init reaps it."""
    _kill_unless_dead(child)
    _dead(child.pidfd, _EXIT_GRACE_S)
    remove_scratch(child.scratch)
    os.close(child.pidfd)


class ForkServerSandbox:
    """Each job in a child forked from one warm process; up to `slots` jobs at once, from any
    number of threads. The warm process starts on first use (or `layers()`), and again after
    it dies."""

    def __init__(
        self,
        slots: int = 2,
        *,
        uid_base: int = 64000,
        preload: Sequence[str] = DEFAULT_PRELOAD,
        scratch_parent: str | None = None,
    ) -> None:
        # uid_base: where we are root, slot k's children run as uid and gid uid_base + k.
        self._slots = _Slots(slots)
        self._uid_base = uid_base
        self._preload = tuple(preload)
        self._root = ScratchRoot(scratch_parent)  # and the roots of dead services go
        self._lock = threading.Lock()
        self._zygote: _Zygote | None = None
        self._closed = False

    @property
    def parallel_runs(self) -> int:
        return self._slots.count

    def run(self, job: Job) -> Execution:
        with self._slots.take() as slot:
            zygote = self._warm()
            child = zygote.take_spare(slot)
            if child is None:
                detail = "the warm process died before the run; it is being restarted"
                return Execution(Termination.CRASHED, {}, detail=detail)
            try:
                return supervise(child, job)
            finally:
                zygote.release(child)
                zygote.request_spare(slot)

    def layers(self) -> list[Layer]:
        forked = Layer(
            "process",
            True,
            "a fresh process per submission, forked from a warm "
            "process started with a scrubbed environment",
        )
        return [forked, *self._warm().layers, *_PROCESS_LAYERS]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.close()
        self._root.close()

    def _warm(self) -> _Zygote:
        """The live warm process, started (or restarted) here if need be, with a spare per slot."""
        with self._lock:
            if self._closed:
                raise SandboxUnavailable("the sandbox is closed")
            if self._zygote is None or not self._zygote.alive:
                if self._zygote is not None:
                    self._zygote.close()
                self._zygote = _Zygote.start(self._root.path, self._uid_base, self._preload)
                for slot in range(self._slots.count):
                    self._zygote.request_spare(slot)
            return self._zygote


# --- a fresh interpreter per job ----------------------------------------------------------------


class _Interpreter:
    """A new `python` running one job (`zygote single`), hardened as a forked child would be."""

    def __init__(self, scratch: str, slot: int, uid_base: int, preload: Sequence[str]) -> None:
        self.channel, theirs = socket.socketpair()
        self.process = _start_python(
            "single",
            scratch,
            theirs.fileno(),
            uid_base=uid_base,
            preload=",".join(preload),
            slot=slot,
            scratch=scratch,
            channel_fd=theirs.fileno(),
        )
        theirs.close()
        self._status: ExitStatus | None = None

    def kill(self) -> None:
        if self._status is None:  # not reaped yet, so the pid is still its own
            _kill_group(self.process.pid)

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
        uid_base: int = 64000,
        preload: Sequence[str] = DEFAULT_PRELOAD,
        scratch_parent: str | None = None,
    ) -> None:
        self._slots = _Slots(slots)
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
            probe = subprocess.run(
                _zygote_argv("probe", uid_base=self._uid_base, scratch=self._root.path),
                env=_ENVIRONMENT,
                cwd=self._root.path,
                check=True,
                capture_output=True,
                timeout=_START_TIMEOUT_S,
            )
            self._probed = [Layer(**fields) for fields in json.loads(probe.stdout)]
        fresh = Layer("process", True, "a new interpreter per submission, scrubbed environment")
        return [fresh, *self._probed, *_PROCESS_LAYERS]

    def close(self) -> None:
        self._root.close()
