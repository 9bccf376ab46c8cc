"""The warm process: torch imported once, then one hardened child forked per job.

`grader.sandbox.warm_process_client` starts it as a fresh interpreter
(`python -I -m grader.sandbox.warm_process`) with a scrubbed environment and an empty working
directory, so it holds no secret, no reference and no expected output for a child to find.
Commands:

- `serve`: the warm process itself. Over a SOCK_SEQPACKET control socket it answers
  `{"spawn": slot}` with `{"spawned": pid, "slot": slot, "scratch": path}` plus two descriptors:
  the supervisor's end of the child's channel (so jobs and results never pass through here) and a
  pidfd of the child (so the supervisor can tell when it is dead, should this process die
  first). When a child dies it kills the child's process group, reaps it, removes its scratch
  directory and reports `{"exited": pid, ...}`. It says `{"ready": layers}` once warm.
- `single`: the cold path, one job on the channel at fd 3 in this very process (the benchmark's
  fresh-interpreter baseline).

A child hardens itself (`hardening.prepare`), waits for its job, applies the job's limits
(`hardening.confine`), runs it with `guest.execute`, and reports events on its channel. It never
returns into the loop it was forked from: every path ends in `os._exit`.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import select
import selectors
import signal
import socket
import sys
import tempfile
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from grader.contract import Backprop, Call, Job, Policy, Violation
from grader.limits import SandboxLimits
from grader.sandbox import guest, hardening, huge_pages
from grader.sandbox.frames import MAX_JOB_HEADER, FrameReader
from grader.sandbox.policy import import_importable, importable_modules
from grader.sandbox.protocol import (
    Event,
    ExitCode,
    Finished,
    Rejected,
    Violated,
    decode_job,
    encode_event,
)
from grader.sandbox.scratch import make_scratch, remove_scratch
from grader.sandbox.supervision import kill_group
from grader.sandbox.torch_setup import configure_torch
from grader.sandbox.transcript import EventReporter

# Grading yields the CPU to the service that started it: at a deadline the API answers a POST in
# milliseconds while the graders use what is left. Ten steps make a runnable grading child weigh
# about a tenth of a process at the service's niceness (110 against 1024 in the kernel's table),
# so on a core shared with two busy children the API still gets over four fifths of it; five
# steps (a third) would leave it under two thirds. An idle service takes nothing: the children
# then have every core, and a grading alone on the machine is no slower. This weighs where the
# service and its children share a cgroup (a container). Where the kernel weighs sessions first
# (autogroup, on a host outside any container) each child's session weighs as much as the API's,
# and is left so: nicer, it would yield to every session on the machine, not just the service's,
# and a busy machine would starve a correct answer (tests/sandbox/test_busy_machine.py).
GRADING_NICENESS = 10


def main(argv: list[str] | None = None) -> None:
    args = _arguments().parse_args(argv)
    os.nice(GRADING_NICENESS)  # relative to the service's, and inherited by every child
    scratch_root = args.scratch or tempfile.gettempdir()
    preload = tuple(args.preload.split(","))
    load_runtime(preload)
    if args.command == "single":
        run_child(args.channel_fd, args.scratch, hardening.slot_uid(args.uid_base, args.slot))
    warm_up(preload)
    settle_for_forking(collapse=bool(args.huge_pages))
    control = socket.socket(fileno=args.control_fd)
    layers = hardening.probe_layers(hardening.slot_uid(args.uid_base, 0), scratch_root)
    control.send(json.dumps({"ready": [vars(layer) for layer in layers]}).encode())
    _Server(control, args.scratch, args.uid_base, preload).serve()
    # Its children are reaped and their scratch dirs gone: nothing is left to clean up, and
    # tearing down the interpreter (torch's modules and the frozen heap) would cost a quarter
    # of a second that the supervisor waits for, a one-shot `autograder grade` in particular.
    os._exit(0)


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader.sandbox.warm_process")
    parser.add_argument("command", choices=("serve", "single"))
    parser.add_argument("--uid-base", type=int, required=True)
    parser.add_argument("--preload", required=True, help="modules submissions may import, by ,")
    parser.add_argument("--scratch", help="the parent of the children's scratch dirs")
    parser.add_argument("--control-fd", type=int)
    parser.add_argument("--channel-fd", type=int)
    parser.add_argument("--slot", type=int, default=0)
    parser.add_argument("--huge-pages", type=int, choices=(0, 1), default=0)
    return parser


def load_runtime(preload: tuple[str, ...]) -> None:
    """Import what submissions may import: a child, once confined, can open no file to import
    anything more."""
    configure_torch()
    import_importable(preload)


# Attention as students write it, through the policy: the compiler, the guards and their caches,
# the ops (Linear, matmul, softmax, masked_fill, tril, cat, round) and printing a tensor and a
# module all run once in the warm process, so that no child pays their lazy initialisation, and
# none imports a module lazily, which a confined child could not (tensor printing does). The
# grader's gradient pass runs here too, so that no child pays the autograd engine's first use.
_WARM_UP_SOURCE = """
import torch

class Attention(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        T = x.shape[1]
        scores = self.proj(x) @ torch.transpose(x, 1, 2) / (x.shape[2] ** 0.5)
        mask = torch.tril(torch.ones(T, T)) == 0
        weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        print("warm", weights, self, f"{x.shape=}")
        return torch.round(torch.cat([weights @ x, x], dim=-1), decimals=4)
"""


def warm_up(preload: tuple[str, ...]) -> None:
    call = Call("warm-up", (np.ones((2, 4, 8), np.float32),), {"dim": 8}, seed=0)
    backprop = Backprop((np.ones((2, 4, 16), np.float32),), learning_rate=0.05, wrt=(0,))
    gradients = dataclasses.replace(call, id="warm-up [gradients]", backprop=backprop)
    # Every preloaded module allowed, so the guards' per-module caches are filled here too.
    policy = Policy(tuple(sorted(importable_modules(("torch", *preload)))))
    calls = (call, gradients)
    job = Job(_WARM_UP_SOURCE, "Attention", "module", "torch", policy, calls, SandboxLimits())
    guest.execute(job, EventReporter(_expect_success), _refuse)


def settle_for_forking(*, collapse: bool) -> None:
    """Everything alive now is shared with every child: keep the garbage collector from touching
    (and so copying) those pages in each of them, and (`collapse`: into huge pages) make them
    cheaper to fork and to tear down."""
    gc.freeze()
    if collapse:
        huge_pages.collapse_anonymous_memory()


def _expect_success(event: Event) -> None:
    if isinstance(event, Rejected) or (isinstance(event, Finished) and event.outcome.error):
        raise RuntimeError(f"the warm-up submission failed: {event}")


def _refuse(violation: Violation) -> NoReturn:
    raise RuntimeError(f"the warm-up submission broke the policy: {violation}")


class _Server:
    def __init__(
        self, control: socket.socket, scratch_root: str, uid_base: int, preload: tuple[str, ...]
    ) -> None:
        self._control = control
        self._scratch_root = scratch_root
        self._uid_base = uid_base
        self._preload = preload
        self._selector = selectors.DefaultSelector()
        self._children: dict[int, str] = {}  # pid -> its scratch dir

    def serve(self) -> None:
        """Fork and reap until the supervisor hangs up; then take the children down too."""
        self._selector.register(self._control, selectors.EVENT_READ)
        try:
            while self._step():
                pass
        except ConnectionError:  # the supervisor went away in the middle of a message
            pass
        self._shut_down()

    def _step(self) -> bool:
        for key, _ in self._selector.select():
            if key.fileobj is not self._control:
                self._reap(key.fd, key.data)
                continue
            message = self._control.recv(4096)
            if not message:
                return False
            self._spawn(int(json.loads(message)["spawn"]))
        return True

    def _spawn(self, slot: int) -> None:
        uid = hardening.slot_uid(self._uid_base, slot)
        scratch = make_scratch(self._scratch_root, uid)
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            run_child(theirs.fileno(), scratch, uid, rehearse=lambda: warm_up(self._preload))
        theirs.close()
        self._children[pid] = scratch
        pidfd = os.pidfd_open(pid)  # ours: not reaped before we say so
        self._selector.register(pidfd, selectors.EVENT_READ, pid)
        self._send({"spawned": pid, "slot": slot, "scratch": scratch}, ours.fileno(), pidfd)
        ours.close()

    def _reap(self, pidfd: int, pid: int) -> None:
        self._selector.unregister(pidfd)
        os.close(pidfd)
        # Dead but not reaped, the child still holds its pid and so its group's id: whatever else
        # is in the group (nothing, unless seccomp and RLIMIT_NPROC both failed) dies before the
        # directory goes, and nothing can write there while it is removed.
        _kill_child(pid)
        _, status, usage = os.wait4(pid, 0)
        remove_scratch(self._children.pop(pid))
        self._send({"exited": pid, "status": status, "cpu_s": usage.ru_utime + usage.ru_stime})

    def _send(self, message: dict[str, Any], *fds: int) -> None:
        socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))

    def _shut_down(self) -> None:
        for pid, scratch in self._children.items():
            _kill_child(pid)
            os.waitpid(pid, 0)
            remove_scratch(scratch)


def _kill_child(pid: int) -> None:
    """Kill a child of ours and its group. Not reaped, the pid is still the child's: one that has
    not yet made its own group is killed alone."""
    if not kill_group(pid):
        os.kill(pid, signal.SIGKILL)


# How long a fresh child waits for a job before it rehearses: a job that was waiting for this
# child is sent the moment the supervisor hears of it, within a millisecond or two.
_REHEARSAL_DELAY_S = 0.05


def run_child(
    channel_fd: int, scratch: str, uid: int | None, rehearse: Callable[[], None] = lambda: None
) -> NoReturn:
    """Harden this process, take one job from the channel, run it, report, exit.

    `rehearse` runs if no job comes soon: a forked spare runs the warm-up again, so that the
    copy-on-write faults of touching the warm process's objects happen while it waits, not while
    the student does (a third of a trivial job's latency). Under load the job comes at once and
    the rehearsal, which would only delay it, is skipped.
    """
    code = 1
    try:
        hardening.prepare(channel_fd, scratch, uid)
        channel = socket.socket(fileno=hardening.CHANNEL_FD)
        if not select.select([channel], [], [], _REHEARSAL_DELAY_S)[0]:
            rehearse()
        job = _receive_job(channel)
        if job is not None:  # None: the supervisor closed a spare it no longer needs
            hardening.confine(job.limits, scratch)
            _execute(job, channel)
        code = 0
    except MemoryError:  # in our own code, around the calls (inside them it is an outcome)
        code = ExitCode.MEMORY
    finally:
        os._exit(code)


def _receive_job(channel: socket.socket) -> Job | None:
    reader = FrameReader(MAX_JOB_HEADER, budget=1 << 40)
    while chunk := channel.recv(1 << 20):
        for frame in reader.feed(chunk):
            return decode_job(frame)
    return None


def _execute(job: Job, channel: socket.socket) -> None:
    def send(event: Event) -> None:
        channel.sendall(encode_event(event))

    def on_violation(violation: Violation) -> NoReturn:
        # The run ends here, whatever the submission's `except:` clauses would like.
        try:
            send(Violated(violation))
        finally:
            os._exit(ExitCode.VIOLATION)

    guest.execute(job, EventReporter(send), on_violation)


if __name__ == "__main__":
    main(sys.argv[1:])
