"""The resource limits of one sandboxed run, passed with each job (never process-wide state)."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    # RLIMIT_CPU: stops busy loops that would otherwise hold a grading slot until the wall clock
    # runs out; the kernel sends SIGXCPU, which the supervisor reports as a timeout.
    cpu_s: float = 10.0
    # Wall-clock deadline kept by the supervisor: stops what burns no CPU (sleeping, blocking).
    wall_s: float = 20.0
    # Memory the child may add on top of the warm process it was forked from: stops memory bombs
    # before they push the machine into swap or the OOM killer.
    memory_bytes: int = 2048 * MIB
    # Bytes the child may send back on the result channel (outputs and captured prints): stops a
    # child from exhausting the supervisor's memory with a flood of output.
    output_bytes: int = 64 * MIB
    # Characters of print() output kept per call; the rest is cut with a note.
    stdout_chars: int = 8192
    # RLIMIT_FSIZE: the largest file the child may write, in its scratch directory only.
    file_size_bytes: int = 1 * MIB
    # RLIMIT_NOFILE: descriptors the child may hold; the warm process's own stay open.
    open_files: int = 64
