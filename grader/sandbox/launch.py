"""Starting the processes that run jobs: their environment, the interpreter command, slots.

Shared by the warm process's sandbox (`process.py`) and the fresh-interpreter baseline (`fresh.py`).
"""

from __future__ import annotations

import queue
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from grader.sandbox.cpus import running_children
from grader.sandbox.interface import Layer

# The warm process's entire environment: nothing of ours (no AUTOGRADER_* secret, no database URL,
# no proxy). One thread for every math library, so numpy's OpenBLAS starts no pool at import
# (see torch_setup.configure_torch for why the warm process must stay single-threaded).
ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "LC_ALL": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# The libraries submissions may import, imported by the warm process with what each brings (a
# confined child cannot import): the union of the exercises' `allowed_imports`.
DEFAULT_PRELOAD = ("torch", "numpy")
START_TIMEOUT_S = 120.0  # importing torch on a cold, busy machine

# Where we are root, slot k's children run as uid and gid UID_BASE + k (`hardening.slot_uid`).
UID_BASE = 64000

FORKED_PROCESS = Layer(
    "process",
    True,
    "a fresh process per submission, forked from a warm process started with a scrubbed "
    "environment",
)
PROCESS_LAYERS = (
    Layer("channel", True, "results come back as validated frames; nothing is unpickled"),
    Layer("supervision", True, "wall-clock deadline, kill of the process group, output cap"),
)


class Slots:
    """Numbered places for runs at once; each slot has its own uid and its own spare child.
    A slot is handed out with a CPU to run on (`cpus.running_children`): a run that would find
    none waits here, before its clock starts."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(count):
            self._free.put(slot)

    @contextmanager
    def take(self) -> Iterator[int]:
        slot = self._free.get()
        try:
            with running_children():
                yield slot
        finally:
            self._free.put(slot)


def warm_process_argv(command: str, **options: object) -> list[str]:
    """`python -m grader.sandbox.warm_process COMMAND --OPTION VALUE...`"""
    # -I: isolated mode, so no PYTHON* variable, user site or working directory shapes imports.
    argv = [sys.executable, "-I", "-m", "grader.sandbox.warm_process", command]
    for name, value in options.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv


def start_python(
    command: str,
    scratch: str,
    fd: int,
    *,
    fd_name: str,
    uid_base: int,
    preload: Sequence[str],
    **options: object,
) -> subprocess.Popen[bytes]:
    """The warm process module's `command` in `scratch`, handed descriptor `fd` as option `fd_name`,
    in a session of its own (so a Ctrl-C meant for the service does not reach it)."""
    argv = warm_process_argv(
        command,
        uid_base=uid_base,
        preload=",".join(preload),
        scratch=scratch,
        **{fd_name: fd},
        **options,
    )
    return subprocess.Popen(
        argv,
        env=ENVIRONMENT,
        cwd=scratch,
        pass_fds=[fd],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
