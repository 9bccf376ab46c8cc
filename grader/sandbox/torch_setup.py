"""How torch is set up wherever submissions run: in the warm process (so in every child forked
from it), in the fresh-interpreter baseline, and in the benchmark's in-process floor; and, all
but the inter-op pool, where references run (`configure_for_references`)."""

from __future__ import annotations

from types import ModuleType

import torch


def configure_torch() -> None:
    # One thread, set before any op runs: a fork copies only the calling thread, so a child
    # forked after OpenMP started its pool would wait forever for workers it does not have; and
    # the child's seccomp filter refuses new threads anyway. (The supervisor also sets
    # OMP_NUM_THREADS=1 so that numpy's OpenBLAS starts no pool at import.)
    torch.set_num_interop_threads(1)
    configure_for_references()


def configure_for_references() -> None:
    """The grading process's torch, before it runs references (`grader.plan_building`): one
    thread, since their work is a few small ops and the other cores are the sandbox's (on two
    cores, a second thread made a plan slower), and the CPU alone seeded (below: most of a
    plan's time without it). Safe to call again; it leaves the inter-op pool alone, which torch
    lets a process size only before any parallel work."""
    torch.set_num_threads(1)
    _seed_the_cpu_only()


def _seed_the_cpu_only() -> None:
    """torch.manual_seed also seeds every accelerator backend, and while a backend is not
    initialised (on a CPU grader: always) each call formats the whole Python stack, reading
    source files, to queue a deferred seed. The seed exercise reseeds once per head: that was
    a third of its grading time (and, in a sandboxed child that may read no source file, a
    thousand refused `stat` and `open` calls per run). No accelerator runs here, so only the CPU
    is seeded."""
    backends: tuple[ModuleType, ...] = (torch.cuda, torch.xpu, torch.mtia)
    for backend in backends:
        if not backend.is_available():
            setattr(backend, "manual_seed_all", _ignore_seed)  # noqa: B010 (typed stubs lack it)


def _ignore_seed(seed: int) -> None:
    del seed
