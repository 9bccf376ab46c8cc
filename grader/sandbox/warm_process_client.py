"""The supervisor's side of the warm process (`grader.sandbox.warm_process`): start it, have it fork
a spare child per slot, hear how each child exited, and clean up after children it did not live
to reap.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.errors import SandboxUnavailable
from grader.sandbox.hardening import protect_supervisor
from grader.sandbox.interface import Layer
from grader.sandbox.launch import START_TIMEOUT_S, start_python
from grader.sandbox.scratch import remove_scratch
from grader.sandbox.supervision import (
    EXIT_GRACE_S,
    ChildLost,
    ExitStatus,
    kill_group,
    run_queue_delay_s,
)

_SPARE_TIMEOUT_S = 30.0  # a warm process that cannot fork within this is wedged


@dataclass
class ForkedChild:
    """A child the warm process forked, as its supervisor drives it (a `supervision.Child`)."""

    pid: int
    channel: socket.socket
    pidfd: int  # from the warm process: readable once the child is dead, whoever reaps it
    scratch: str
    warm_process: WarmProcess = field(repr=False)
    released: bool = False  # its run is over, or it will never have one

    def kill(self) -> None:
        self.warm_process.kill(self)

    def wait(self, timeout: float) -> ExitStatus | None:
        return self.warm_process.wait_exit(self.pid, timeout)

    def cpu_wait_s(self) -> float | None:
        return run_queue_delay_s(self.pid)


class WarmProcess:
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
        self._spares: dict[int, ForkedChild] = {}
        self._children: dict[int, ForkedChild] = {}  # each until both reaped and released
        self._exits: dict[int, ExitStatus] = {}  # of children reaped (scratch dir removed)
        self._reader = threading.Thread(target=self._read, name="warm-process-reader", daemon=True)
        self._reader.start()

    @classmethod
    def start(
        cls, root: str, uid_base: int, preload: Sequence[str], huge_pages: bool
    ) -> WarmProcess:
        protect_supervisor()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = start_python(
            "serve",
            root,
            theirs.fileno(),
            fd_name="control_fd",
            uid_base=uid_base,
            preload=preload,
            huge_pages=int(huge_pages),
        )
        theirs.close()
        ours.settimeout(START_TIMEOUT_S)
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

    def take_spare(self, slot: int) -> ForkedChild | None:
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

    def kill(self, child: ForkedChild) -> None:
        with self._changed:
            if child.pid not in self._exits:
                _kill_unless_dead(child)

    def release(self, child: ForkedChild) -> None:
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
            self.process.wait(EXIT_GRACE_S)
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
                spare = ForkedChild(pid, channel, fds[1], str(message["scratch"]), self)
                self._children[pid] = spare
                self._spares[int(message["slot"])] = spare
            elif (reaped := self._children.get(int(message["exited"]))) is not None:
                status = ExitStatus(int(message["status"]), float(message["cpu_s"]))
                self._exits[reaped.pid] = status
                if reaped.released:
                    self._forget(reaped)
            self._changed.notify_all()

    def _forget(self, child: ForkedChild, keep_pidfd: bool = False) -> None:
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


def _dead(pidfd: int, timeout_s: float) -> bool:
    """Whether the process has exited, waiting up to `timeout_s` for it."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(timeout_s * 1000))


def _kill_unless_dead(child: ForkedChild) -> None:
    # Once dead it may be reaped at any moment, and its pid then belongs to someone else.
    if not _dead(child.pidfd, 0):
        kill_group(child.pid)


def _clean_up_after(child: ForkedChild) -> None:
    """What the warm process does for a child, for one it did not live to reap: kill its group,
    and remove its scratch dir once it is dead. Init reaps it."""
    _kill_unless_dead(child)
    _dead(child.pidfd, EXIT_GRACE_S)
    remove_scratch(child.scratch)
    os.close(child.pidfd)
