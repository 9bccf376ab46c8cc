"""No more sandboxed children run at once than the machine has CPUs for (grader.sandbox.cpus)."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

import pytest

from grader.sandbox.cpus import cgroup_cpu_quota, running_children, usable_cpus
from grader.sandbox.launch import Slots
from grader.settings import GraderSettings


def test_slots_of_every_sandbox_together_hold_no_more_than_the_cpus() -> None:
    """A sandbox each, a slot each: once there are as many as CPUs, no further run may start."""
    sandboxes = [Slots(1) for _ in range(usable_cpus())]
    with ExitStack() as held:
        for slots in sandboxes:
            held.enter_context(slots.take())
        assert not running_children().acquire(blocking=False)
    assert running_children().acquire(blocking=False)  # given back with the slots
    running_children().release()


def test_the_cpus_are_those_the_process_may_run_on() -> None:
    assert 1 <= usable_cpus() <= len(os.sched_getaffinity(0))
    assert GraderSettings().sandbox_slots == min(usable_cpus(), 64)


def own_cgroup(root: Path) -> Path:
    lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    path = next((line[3:] for line in lines if line.startswith("0::")), None)
    if path is None:
        pytest.skip("this host has no cgroup v2 hierarchy")
    folder = root / path.lstrip("/")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize(
    ("cpu_max", "cpus"), [("150000 100000", 2), ("100000 100000", 1), ("max 100000", None)]
)
def test_a_cgroup_quota_counts_in_whole_cpus_rounded_up(
    tmp_path: Path, cpu_max: str, cpus: int | None
) -> None:
    (own_cgroup(tmp_path) / "cpu.max").write_text(f"{cpu_max}\n", encoding="ascii")
    assert cgroup_cpu_quota(tmp_path) == cpus


def test_no_cgroup_file_is_no_quota(tmp_path: Path) -> None:
    assert cgroup_cpu_quota(tmp_path) is None
