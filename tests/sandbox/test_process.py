"""The process layers: the warm process, its supervision, and the two other sandboxes.

Every submission here is a small benign torch module; the limits are checked by running a busy
loop or an oversized allocation through `WarmProcessSandbox` with its limits on, never directly.
"""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grader.contract import Call, Execution, Job, Policy, Termination
from grader.limits import MIB, SandboxLimits
from grader.sandbox import landlock
from grader.sandbox.fresh import FreshInterpreterSandbox
from grader.sandbox.inprocess import InProcessSandbox
from grader.sandbox.process import WarmProcessSandbox
from grader.sandbox.protocol import ExitCode
from grader.sandbox.supervision import ExitStatus, classify_exit
from grader.sandbox.warm_process import GRADING_NICENESS

POLICY = Policy(("torch", "torch.nn", "math"))
X = np.arange(6, dtype=np.float32).reshape(2, 3)
SCALE = """\
import torch

class Scale(torch.nn.Module):
    def __init__(self, k: int = 2):
        super().__init__()
        self.k = k

    def forward(self, x):
        print("scaling by", self.k)
        return x * self.k
"""
# The body of `forward` in a module that takes no constructor arguments.
FORWARD = """\
import torch

class Scale(torch.nn.Module):
    def forward(self, x):
{}
"""


def scale_job(source: str = SCALE, limits: SandboxLimits | None = None, k: int = 3) -> Job:
    calls = (Call("by-k", (X,), {"k": k}), Call("default", (X,)))
    return Job(source, "Scale", "module", "torch", POLICY, calls, limits or SandboxLimits())


def forward_job(body: str, limits: SandboxLimits) -> Job:
    source = FORWARD.format("\n".join("        " + line for line in body.splitlines()))
    return Job(source, "Scale", "module", "torch", POLICY, (Call("only", (X,)),), limits)


def assert_scaled(execution: Execution, k: int = 3) -> None:
    assert execution.termination is Termination.COMPLETED, execution.detail
    for call_id, factor in (("by-k", k), ("default", 2)):
        outputs = execution.outcomes[call_id].outputs
        assert outputs is not None and outputs[0].array is not None
        np.testing.assert_array_equal(outputs[0].array, X * factor)
        assert execution.outcomes[call_id].stdout == f"scaling by {factor}\n"


# --- how a child's exit is read (no fork) -------------------------------------------------------


@pytest.mark.parametrize(
    ("wait_status", "cpu_s", "termination", "detail"),
    [
        (signal.SIGXCPU, 2.0, Termination.TIMEOUT, "CPU"),
        (signal.SIGKILL, 3.0, Termination.TIMEOUT, "CPU"),
        (signal.SIGKILL, 0.2, Termination.MEMORY, "out-of-memory"),
        (signal.SIGSEGV, 0.2, Termination.CRASHED, "killed by SIGSEGV"),
        (signal.SIGSYS, 0.2, Termination.CRASHED, "SIGSYS: a system call the sandbox forbids"),
        (ExitCode.VIOLATION << 8, 0.1, Termination.VIOLATION, "guard"),
        (ExitCode.MEMORY << 8, 0.1, Termination.MEMORY, "allocation"),
        (1 << 8, 0.1, Termination.CRASHED, "exited with status 1"),
        (0, 0.1, Termination.CRASHED, "before reporting every call"),
    ],
)
def test_an_exit_is_classified_by_what_the_supervisor_saw(
    wait_status: int, cpu_s: float, termination: Termination, detail: str
) -> None:
    ending = classify_exit(ExitStatus(wait_status, cpu_s), scale_job(limits=SandboxLimits(cpu_s=2)))
    assert ending[0] is termination
    assert detail in ending[1]


# --- in process (no fork) -----------------------------------------------------------------------


def test_in_process_runs_the_calls_and_says_it_isolates_nothing() -> None:
    sandbox = InProcessSandbox()
    assert_scaled(sandbox.run(scale_job()))
    assert [layer.active for layer in sandbox.layers()] == [False]


def test_in_process_a_swallowed_violation_still_ends_the_run() -> None:
    body = "try:\n    torch.load('weights.pt')\nexcept:\n    pass\nreturn x"
    execution = InProcessSandbox().run(forward_job(body, SandboxLimits()))
    assert execution.termination is Termination.VIOLATION
    assert "torch.load" in execution.violations[0].message


# --- the warm process --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox() -> Iterator[WarmProcessSandbox]:
    # The secret is in the environment the warm process is started from, as in the service.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOGRADER_SECRET", "do-not-leak")
        forked = WarmProcessSandbox(slots=2)
        forked.layers()  # starts the warm process
    try:
        yield forked
    finally:
        forked.close()


def warm_process_pid() -> int:
    """The warm process this test process started (our child running its module)."""
    for entry in Path("/proc").iterdir():
        ours = entry.name.isdigit() and _parent(entry) == os.getpid()
        if ours and b"grader.sandbox.warm_process" in (entry / "cmdline").read_bytes():
            return int(entry.name)
    raise AssertionError("no warm process")


def _parent(entry: Path) -> int | None:
    try:
        return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError):
        return None


def exists(pid: int) -> bool:
    """Running, not a zombie: a zombie's command line is empty, a reaped process has none."""
    try:
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except FileNotFoundError:
        return False


def running_children(pid: int) -> list[int]:
    children = (Path(f"/proc/{pid}/task/{pid}/children").read_text()).split()
    return [int(c) for c in children if Path(f"/proc/{c}/stat").read_text().split(")")[1][1] == "R"]


@pytest.mark.slow
def test_the_warm_process_forks_from_huge_pages(sandbox: WarmProcessSandbox) -> None:
    """Most of its anonymous memory (torch's and the interpreter's) in 2 MiB pages: a fork and
    an exit handle one page-table entry for each instead of 512."""
    rollup = Path(f"/proc/{warm_process_pid()}/smaps_rollup").read_text()
    sizes = dict(line.split(":") for line in rollup.splitlines()[1:])
    huge, anonymous = (int(sizes[name].split()[0]) for name in ("AnonHugePages", "Anonymous"))
    assert huge > anonymous / 2


@pytest.mark.slow
def test_a_correct_job_returns_the_right_arrays_and_prints(sandbox: WarmProcessSandbox) -> None:
    assert_scaled(sandbox.run(scale_job()))


@pytest.mark.slow
def test_a_busy_loop_times_out_at_the_wall_clock_and_the_next_job_grades_right(
    sandbox: WarmProcessSandbox,
) -> None:
    # How long it ran depends on the machine's load: the time it waited for a CPU is given back.
    execution = sandbox.run(forward_job("while True:\n    pass", SandboxLimits(wall_s=1)))
    assert execution.termination is Termination.TIMEOUT
    assert execution.interrupted_call == "only"
    assert "wall-clock" in execution.detail
    assert_scaled(sandbox.run(scale_job()))


@pytest.mark.slow
def test_a_busy_loop_runs_out_of_cpu(sandbox: WarmProcessSandbox) -> None:
    limits = SandboxLimits(cpu_s=1, wall_s=10)
    execution = sandbox.run(forward_job("while True:\n    pass", limits))
    assert execution.termination is Termination.TIMEOUT
    assert "CPU" in execution.detail


@pytest.mark.slow
def test_an_oversized_allocation_ends_the_run_as_memory(sandbox: WarmProcessSandbox) -> None:
    limits = SandboxLimits(memory_bytes=256 * MIB)
    execution = sandbox.run(forward_job("return torch.ones(2**30)", limits))
    assert execution.termination is Termination.MEMORY
    assert execution.interrupted_call == "only"


@pytest.mark.slow
def test_an_oversized_output_ends_the_run_as_output_limit(sandbox: WarmProcessSandbox) -> None:
    limits = SandboxLimits(output_bytes=1 * MIB)
    execution = sandbox.run(forward_job("return torch.ones(1000, 1000)", limits))
    assert execution.termination is Termination.OUTPUT_LIMIT


@pytest.mark.slow
def test_a_violation_ends_the_run_even_when_swallowed(sandbox: WarmProcessSandbox) -> None:
    body = "try:\n    torch.load('weights.pt')\nexcept:\n    pass\nreturn x"
    execution = sandbox.run(forward_job(body, SandboxLimits()))
    assert execution.termination is Termination.VIOLATION
    assert execution.interrupted_call == "only"
    assert "torch.load" in execution.violations[0].message


@pytest.mark.slow
def test_a_rejected_source_runs_nothing(sandbox: WarmProcessSandbox) -> None:
    execution = sandbox.run(scale_job("import os\n" + SCALE))
    assert execution.termination is Termination.REJECTED
    assert execution.outcomes == {}
    assert execution.violations[0].line == 1


@pytest.mark.slow
def test_a_child_killed_by_a_signal_is_crashed(sandbox: WarmProcessSandbox) -> None:
    results: list[Execution] = []
    job = forward_job("while True:\n    pass", SandboxLimits(wall_s=20))
    runner = threading.Thread(target=lambda: results.append(sandbox.run(job)))
    runner.start()
    # Spares are busy only while they rehearse (milliseconds); the job's child stays busy.
    deadline, busy = time.monotonic() + 10, list[int]()
    while len(busy) != 1 and time.monotonic() < deadline:
        time.sleep(0.2)  # well into its loop
        busy = running_children(warm_process_pid())
    os.kill(busy[0], signal.SIGSEGV)
    runner.join()
    assert results[0].termination is Termination.CRASHED
    assert results[0].detail == "killed by SIGSEGV"
    assert results[0].interrupted_call == "only"


@pytest.mark.slow
def test_the_warm_process_holds_no_secret_and_one_thread(sandbox: WarmProcessSandbox) -> None:
    pid = warm_process_pid()
    environment = Path(f"/proc/{pid}/environ").read_bytes()
    assert b"AUTOGRADER" not in environment
    assert b"do-not-leak" not in environment
    # Forking a process with several threads would leave the child's copies of them dead.
    assert len(list(Path(f"/proc/{pid}/task").iterdir())) == 1


@pytest.mark.slow
def test_a_grading_child_is_nicer_than_the_service(sandbox: WarmProcessSandbox) -> None:
    """At a deadline the service answers POSTs first; the graders get the CPU it leaves."""
    sandbox.layers()  # the warm process forks a spare per slot as it starts
    deadline = time.monotonic() + 30
    while not (children := spare_children(warm_process_pid())) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children, "no spare child was forked"
    nicer = min(os.getpriority(os.PRIO_PROCESS, 0) + GRADING_NICENESS, 19)  # 19: the nicest
    assert [niceness(child) for child in children] == [nicer] * len(children)


def spare_children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


@pytest.mark.slow
def test_the_supervising_process_is_not_dumpable(sandbox: WarmProcessSandbox) -> None:
    """It holds the secret: a same-uid child must not read its /proc/<pid>/environ or memory."""
    sandbox.layers()  # starts the warm process, which protects its supervisor first
    pr_get_dumpable = 3
    assert ctypes.CDLL(None).prctl(pr_get_dumpable, 0, 0, 0, 0) == 0


@pytest.mark.slow
def test_layers_say_what_this_host_allows(sandbox: WarmProcessSandbox) -> None:
    layers = {layer.name: layer for layer in sandbox.layers()}
    assert set(layers) >= {
        "process",
        "namespaces",
        "unprivileged_uid",
        "rlimits",
        "no_new_privs",
        "landlock",
        "seccomp",
        "channel",
        "supervision",
    }
    assert all(layer.detail for layer in layers.values())
    # What any Linux allows; the rest depends on privileges and the kernel.
    assert layers["rlimits"].active and layers["no_new_privs"].active
    assert layers["landlock"].active == (landlock.abi() > 0)
    assert layers["seccomp"].active == (platform.machine() in ("x86_64", "aarch64"))
    if layers["seccomp"].active:
        assert "calls allowed, everything else refused" in layers["seccomp"].detail
    if os.geteuid() != 0:
        assert not layers["unprivileged_uid"].active


@pytest.mark.slow
def test_two_threads_grade_at_once(sandbox: WarmProcessSandbox) -> None:
    barrier = threading.Barrier(2)
    results: dict[int, Execution] = {}

    def grade(k: int) -> None:
        barrier.wait()
        results[k] = sandbox.run(scale_job(k=k))

    threads = [threading.Thread(target=grade, args=(k,)) for k in (3, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert_scaled(results[3], k=3)
    assert_scaled(results[5], k=5)


@pytest.mark.slow
def test_a_dead_warm_process_fails_one_run_at_most_and_is_restarted(
    sandbox: WarmProcessSandbox,
) -> None:
    old = warm_process_pid()
    os.kill(old, signal.SIGKILL)
    # A spare handed over before the death still runs its job (the channel is direct); a run that
    # needed the dead process fails as CRASHED; then a new warm process takes over.
    for racing in [sandbox.run(scale_job()) for _ in range(2)]:
        if racing.termination is not Termination.COMPLETED:
            assert racing.termination is Termination.CRASHED
            assert "warm process" in racing.detail
    while exists(old):  # until its exit has closed its sockets
        time.sleep(0.01)
    time.sleep(0.1)
    assert_scaled(sandbox.run(scale_job()))
    assert warm_process_pid() != old


@pytest.mark.slow
def test_a_library_to_preload_replaces_the_warm_process_once_its_runs_end(
    sandbox: WarmProcessSandbox,
) -> None:
    """An exercise added on a running service may allow a library the warm process lacks."""
    old = warm_process_pid()
    results: list[Execution] = []
    job = forward_job("for _ in range(20_000_000):\n    pass\nreturn x", SandboxLimits())
    runner = threading.Thread(target=lambda: results.append(sandbox.run(job)))
    runner.start()
    busy = list[int]()
    while not busy and runner.is_alive():
        time.sleep(0.05)
        busy = running_children(old)
    sandbox.preload(["torch", "numpy", "fractions"])
    runner.join()
    assert results[0].termination is Termination.COMPLETED, results[0].detail
    while exists(old):  # stopped after its last run
        time.sleep(0.01)
    assert_scaled(sandbox.run(scale_job()))
    new = warm_process_pid()
    assert new != old
    assert b"fractions" in Path(f"/proc/{new}/cmdline").read_bytes()
    sandbox.preload(["fractions"])  # nothing new: the warm process stays
    assert_scaled(sandbox.run(scale_job()))
    assert warm_process_pid() == new


@pytest.mark.slow
def test_a_fresh_interpreter_runs_a_job_the_same_way() -> None:
    fresh = FreshInterpreterSandbox(slots=1)
    try:
        assert_scaled(fresh.run(scale_job()))
    finally:
        fresh.close()
