"""How many sandboxed children may run at once: no more than the machine has CPUs for.

A child that waits for a CPU is a child the machine starves, and a starved run is the platform's
problem (grader.sandbox.supervision). So the grader does not starve its own children: every
sandbox of a process takes the process-wide `running_children` bound around each run, however
many sandboxes, slots and threads there are. Runs past the bound wait for a CPU before their
clock starts, not after.
"""

from __future__ import annotations

import math
import os
import threading
from functools import lru_cache
from pathlib import Path

_CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask (what `taskset` or a container's
    cpuset allow), fewer where its cgroup's CPU quota (cgroup v2 `cpu.max`, as `docker run
    --cpus` sets it) says so."""
    cpus = len(os.sched_getaffinity(0))
    quota = cgroup_cpu_quota()
    return max(1, cpus if quota is None else min(cpus, quota))


def cgroup_cpu_quota(root: Path = _CGROUP_ROOT) -> int | None:
    """The CPUs' worth of time this process's cgroup v2 may use (rounded up), or None where
    it has no quota or none can be read (cgroup v1, no /sys)."""
    try:
        cgroup = Path("/proc/self/cgroup").read_text(encoding="ascii")
        path = next(line[3:] for line in cgroup.splitlines() if line.startswith("0::"))
        quota, period = (root / path.lstrip("/") / "cpu.max").read_text(encoding="ascii").split()
        return None if quota == "max" else math.ceil(int(quota) / int(period))
    except (OSError, StopIteration, ValueError):
        return None


@lru_cache(maxsize=1)
def running_children() -> threading.BoundedSemaphore:
    """The process-wide bound on sandboxed children running at once: one per usable CPU.
    Made on first use (no work at import); a process has one machine, so one bound."""
    return threading.BoundedSemaphore(usable_cpus())
