"""Scratch directories: none outlives its run, however the run ends, nor its service.

The removal itself is checked on a tree that a child could have left (permissions taken off, a
link out); the runs through `WarmProcessSandbox` with its limits on, each ending another way; the
roots of services that died are swept by the next sandbox to start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from grader.contract import Call, Execution, Job, Policy, Termination
from grader.limits import SandboxLimits
from grader.sandbox.process import WarmProcessSandbox
from grader.sandbox.scratch import ScratchRoot, remove_scratch

ROOT = Path(__file__).resolve().parents[2]
ROOT_PREFIX = "autograder-scratch-"

# --- removal ------------------------------------------------------------------------------------

# What a child that shares the service's uid could leave: directories it can no longer enter,
# list or write, and a link to a directory outside, which must be removed, not followed.
CLOSE_UP = """
import os, sys
from grader.sandbox.scratch import remove_scratch

scratch, outside, user = sys.argv[1], sys.argv[2], sys.argv[3:]
if user:  # the service's uid, shared with its children (a container cannot switch uids)
    os.setgroups([])
    os.setresgid(int(user[0]), int(user[0]), int(user[0]))
    os.setresuid(int(user[0]), int(user[0]), int(user[0]))
os.makedirs(os.path.join(scratch, "a", "b", "c"))
with open(os.path.join(scratch, "a", "b", "file"), "w") as file:
    file.write("left behind")
os.symlink(outside, os.path.join(scratch, "a", "out"))
for directory in ("a/b/c", "a/b", "a", "."):
    os.chmod(os.path.join(scratch, directory), 0)
remove_scratch(scratch)
print(os.path.lexists(scratch))
"""


@pytest.fixture
def unprivileged_tmp() -> Iterator[Path]:
    """A directory straight under /tmp, where an unprivileged uid can reach it."""
    path = Path(tempfile.mkdtemp(prefix="scratch-test-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        remove_scratch(str(path))


def test_a_tree_whose_child_closed_it_up_is_removed_without_following_links(
    unprivileged_tmp: Path,
) -> None:
    scratch, outside = unprivileged_tmp / "scratch", unprivileged_tmp / "outside"
    scratch.mkdir()
    outside.mkdir(mode=0o755)
    (outside / "kept").write_text("not the child's")
    argv = [sys.executable, "-c", CLOSE_UP, str(scratch), str(outside)]
    if os.geteuid() == 0:  # root ignores permissions: show it as a uid that must give them back
        for path in (unprivileged_tmp, scratch, outside, outside / "kept"):
            os.chown(path, 65534, 65534)
        argv.append("65534")
    removal = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert removal.stdout == "False\n", removal.stderr
    assert outside.stat().st_mode & 0o777 == 0o755
    assert (outside / "kept").read_text() == "not the child's"


def test_removing_what_is_gone_is_not_an_error(tmp_path: Path) -> None:
    remove_scratch(str(tmp_path / "never made"))


# --- roots of services that died ----------------------------------------------------------------

DIES_HOLDING_A_ROOT = """
import os, signal, sys
from grader.sandbox.scratch import ScratchRoot

root = ScratchRoot(sys.argv[1])
os.mkdir(os.path.join(root.path, "scratch-of-a-run"))
print(root.path, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def roots(parent: Path) -> set[Path]:
    return set(parent.glob(f"{ROOT_PREFIX}*"))


def test_a_new_root_sweeps_the_roots_of_dead_services_and_keeps_live_ones(tmp_path: Path) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", DIES_HOLDING_A_ROOT, str(tmp_path)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert killed.returncode == -signal.SIGKILL
    abandoned = Path(killed.stdout.strip())
    assert (abandoned / "scratch-of-a-run").is_dir()
    never_locked = tmp_path / f"{ROOT_PREFIX}old"  # left by a process that never locked it
    (never_locked / "scratch-x").mkdir(parents=True)
    unrelated = tmp_path / "not-a-root"
    unrelated.mkdir()
    live = ScratchRoot(str(tmp_path))  # a service still running
    try:
        restarted = ScratchRoot(str(tmp_path))
        try:
            assert roots(tmp_path) == {Path(live.path), Path(restarted.path)}
            assert unrelated.is_dir()
        finally:
            restarted.close()
        assert not Path(restarted.path).exists()
    finally:
        live.close()
    assert roots(tmp_path) == set()


# --- runs through the real sandbox, ending every way --------------------------------------------


@pytest.fixture(scope="module")
def parent() -> Iterator[Path]:
    # Straight under /tmp: the children's uids must traverse it to their own scratch dirs.
    path = Path(tempfile.mkdtemp(prefix="scratch-parent-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        remove_scratch(str(path))


@pytest.fixture(scope="module")
def sandbox(parent: Path) -> Iterator[WarmProcessSandbox]:
    forked = WarmProcessSandbox(slots=1, scratch_parent=str(parent))
    try:
        forked.layers()  # starts the warm process
        yield forked
    finally:
        forked.close()


def scratch_dirs(parent: Path) -> set[Path]:
    return {scratch for root in roots(parent) for scratch in root.iterdir()}


def wait_for(condition: Callable[[], object], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def next_runs_scratch(parent: Path) -> Path:
    """The spare's scratch dir, which the next run takes (one slot: one spare)."""
    wait_for(lambda: len(scratch_dirs(parent)) == 1)
    (scratch,) = scratch_dirs(parent)
    return scratch


def assert_removed(scratch: Path, parent: Path) -> None:
    # The warm process removes it as it reaps the child, just after the run returns.
    wait_for(lambda: not scratch.exists())
    assert scratch not in scratch_dirs(parent)


BUSY = "while True:\n    pass"
SOURCE = """\
import torch

class Scale(torch.nn.Module):
    def forward(self, x):
{}
"""


def forward_job(body: str, limits: SandboxLimits) -> Job:
    source = SOURCE.format("\n".join("        " + line for line in body.splitlines()))
    call = Call("only", (np.ones((2, 3), np.float32),))
    return Job(source, "Scale", "module", "torch", Policy(("torch",)), (call,), limits)


@pytest.mark.slow
def test_a_timed_out_run_leaves_no_scratch_dir(sandbox: WarmProcessSandbox, parent: Path) -> None:
    scratch = next_runs_scratch(parent)
    execution = sandbox.run(forward_job(BUSY, SandboxLimits(wall_s=1)))
    assert execution.termination is Termination.TIMEOUT
    assert_removed(scratch, parent)


@pytest.mark.slow
def test_a_crashed_run_leaves_no_scratch_dir(sandbox: WarmProcessSandbox, parent: Path) -> None:
    scratch = next_runs_scratch(parent)
    # CPython's hash of a deeply nested tuple recurses in C until the stack runs out.
    body = "nested = ()\nfor i in range(1000000):\n    nested = (nested,)\nreturn {nested: 1}"
    execution = sandbox.run(forward_job(body, SandboxLimits()))
    assert execution.termination is Termination.CRASHED
    assert "SIGSEGV" in execution.detail
    assert_removed(scratch, parent)


@pytest.mark.slow
def test_a_run_whose_warm_process_died_leaves_no_scratch_dir(
    sandbox: WarmProcessSandbox, parent: Path
) -> None:
    """Its child outlives the warm process that would have reaped it and cleaned up after it:
    the supervisor does, once the run is over and the child dead."""
    scratch = next_runs_scratch(parent)
    results: list[Execution] = []
    job = forward_job(BUSY, SandboxLimits(wall_s=2))
    runner = threading.Thread(target=lambda: results.append(sandbox.run(job)))
    runner.start()
    time.sleep(0.5)  # the job is in its child, looping
    warm = warm_process(parent)
    os.kill(warm, signal.SIGKILL)
    runner.join()
    assert results[0].termination is Termination.TIMEOUT  # the channel is direct: still timed
    assert_removed(scratch, parent)
    # A new warm process takes over, and its children's dirs go the same way.
    sandbox.layers()
    assert warm_process(parent) != warm
    scratch = next_runs_scratch(parent)
    assert sandbox.run(forward_job(BUSY, SandboxLimits(wall_s=1))).termination is (
        Termination.TIMEOUT
    )
    assert_removed(scratch, parent)


@pytest.mark.slow
def test_closing_the_sandbox_removes_its_root(sandbox: WarmProcessSandbox, parent: Path) -> None:
    next_runs_scratch(parent)
    sandbox.close()
    assert roots(parent) == set()


def warm_process(parent: Path) -> int:
    """The pid of the warm process that keeps its children's dirs under `parent`."""
    (root,) = roots(parent)
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or gone
            continue
        if b"grader.sandbox.warm_process" in argv and str(root).encode() in argv:
            return int(entry.name)
    raise AssertionError("no warm process")
