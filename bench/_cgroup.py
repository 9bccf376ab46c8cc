"""A CPU cgroup of the service's own for a benchmark: the shape it runs in when deployed.

A container (compose) or a systemd unit puts the service's processes in a cgroup of their own,
and inside it the kernel weighs them by their niceness: grading, ten steps nicer than the
service (docs/sandbox.md), yields the CPU to the API. Started from a shell on a host without
either, the processes sit in the root cgroup, where the kernel shares the CPU by session first
(autogroup): each sandboxed child, in a session of its own, weighs as much as the API, and at a
deadline the API waits its turn behind every running child. A benchmark that measures the
deployed service moves its processes into a cgroup of their own (which needs root and a
writable CPU controller); `--no-cgroup` measures the shell's shape.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

V1_CPU = Path("/sys/fs/cgroup/cpu")  # cgroup v1: the CPU controller's own hierarchy
V2_ROOT = Path("/sys/fs/cgroup")  # cgroup v2: one hierarchy, controllers enabled per level


def _cpu_hierarchy() -> Path | None:
    """Where a child cgroup with the CPU controller can be made, or None. On cgroup v2 this
    enables the CPU controller for the root's children, and leaves it enabled."""
    if (V1_CPU / "cpu.shares").exists():
        return V1_CPU
    controllers = V2_ROOT / "cgroup.subtree_control"
    if controllers.exists():
        try:
            if "cpu" not in controllers.read_text().split():
                controllers.write_text("+cpu")
        except OSError:
            return None
        return V2_ROOT
    return None


@contextmanager
def own_cgroup(pids: Iterable[int]) -> Iterator[Path | None]:
    """Move `pids` into a new CPU cgroup (what they fork from then on is born in it); yields
    it, or None where none can be made. On the way out its processes go back to the root
    cgroup and it is removed."""
    hierarchy = _cpu_hierarchy()
    group = None if hierarchy is None else _made(hierarchy, pids)
    try:
        yield group
    finally:
        if group is not None and hierarchy is not None:
            _remove(group, hierarchy)


def _made(hierarchy: Path, pids: Iterable[int]) -> Path | None:
    group = hierarchy / f"autograder-bench-{os.getpid()}"
    try:
        group.mkdir()
    except OSError:
        return None
    try:
        for pid in pids:
            with suppress(ProcessLookupError):  # gone since it was listed
                (group / "cgroup.procs").write_text(str(pid))
    except OSError:
        _remove(group, hierarchy)
        return None
    return group


def _remove(group: Path, hierarchy: Path) -> None:
    for pid in (group / "cgroup.procs").read_text().split():
        with suppress(ProcessLookupError):
            (hierarchy / "cgroup.procs").write_text(pid)
    with suppress(OSError):  # one forked in it meanwhile keeps it: an empty cgroup is left
        group.rmdir()
