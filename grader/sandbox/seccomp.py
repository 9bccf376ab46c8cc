"""The child's seccomp-BPF filter: an allow-list of the system calls grading needs.

The filter is the last layer a child puts on (`hardening.confine`), just before the submission
runs, and the kernel applies it however a call is reached: the interpreter, torch, numpy, ctypes,
a C extension or a hole in the policy. Everything not listed here is refused.

How the list was found: `strace -f` on grading, through the real sandbox, every correct solution
(`exercises/*/solutions/`), every known mistake (`exercises/*/mistakes/`), every starter and the
hostile corpus (`tests/security/corpus/`), with the children's calls counted from the one that
installs the filter to their exit. Those calls were `brk`, `mmap`, `munmap`, `madvise`, `futex`,
`sendto`, `write` and `exit_group`, plus `newfstatat` and `openat` from `linecache` looking up
source lines for a stack that torch formats (`torch.manual_seed` queues lazy CUDA seeding with its
stack). Those two are refused on purpose: Landlock already answered the opens with EACCES,
linecache takes the same way out on EPERM, and `stat` is a probe of the filesystem that Landlock
does not cover. Everything else below is allowed by reasoning, each with its reason: paths of the
allocator, the clock, randomness and abort() that the corpus did not happen to take. (The warm-up,
and a spare's rehearsal of it, run before the filter: they need nothing from it.) Traced again
under this filter, every file gets the verdict it got before.

Refused calls get EPERM, not a kill: the interpreter and the libraries take a graceful way out
where they probe (a thread pool that cannot start, a lookup of a file, a fallback from one call
to another), so correct code that brushes an optional feature still gets its verdict. A few
calls have no use in a child but an attack, and kill it on the spot (SIGSYS, reported as a
crash), so that code which got that far cannot keep probing: running a program and reaching into
another process's memory.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterator

from grader.sandbox.interface import Layer
from grader.sandbox.libc import last_error, libc

# Numbers on (x86_64, aarch64).
_ALLOWED: dict[str, tuple[int, int]] = {
    # Memory: the interpreter's, numpy's and torch's allocators (RLIMIT_AS bounds them all).
    # mremap is how glibc grows a large block in place; mprotect is the allocator's and that of
    # kernels compiled at run time (oneDNN's on aarch64). Traced: brk, mmap, munmap, madvise.
    "brk": (12, 214),
    "mmap": (9, 222),
    "munmap": (11, 215),
    "madvise": (28, 233),
    "mremap": (25, 216),
    "mprotect": (10, 226),
    # Locks: the interpreter's and the libraries' mutexes still wake with one thread. Traced.
    "futex": (202, 98),
    # Results go out on the channel (socket.sendall); fds 1 and 2 are /dev/null, for what a C
    # library writes there, and the probe child writes its report with os.write. Traced. Nothing
    # is read: the job arrived before the filter.
    "sendto": (44, 206),
    "write": (1, 64),
    # Clocks, where the vDSO falls back to the kernel (a host without a vDSO clock source), and
    # fresh randomness for an unseeded generator (numpy's default_rng()): no file, no state.
    "clock_gettime": (228, 113),
    "gettimeofday": (96, 169),
    "getrandom": (318, 278),
    # Ending: os._exit (traced), and abort() of a failing C library, which unblocks SIGABRT and
    # sends it to itself (with kill and tgkill below, on itself only); a signal handler's return.
    "exit_group": (231, 94),
    "exit": (60, 93),
    "getpid": (39, 172),
    "gettid": (186, 178),
    "rt_sigprocmask": (14, 135),
    "rt_sigreturn": (15, 139),
}
# Allowed only on the child itself: the first argument must be 0 or its own pid (the child leads
# its own process group, so 0 is itself too). No signal reaches the supervisor, the warm process
# or another slot.
_SELF_ONLY: dict[str, tuple[int, int]] = {
    "kill": (62, 129),
    "tgkill": (234, 131),
}
# Only an attack calls these in a child: run a program (a shell), read or write another process.
_KILLED: dict[str, tuple[int, int]] = {
    "execve": (59, 221),
    "execveat": (322, 281),
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
}
# clone3 gets ENOSYS, not EPERM: glibc then falls back to clone, which is refused like every other
# way to make a process or a thread (fork, vfork, clone: not on the list).
_CLONE3 = 435

_AUDIT_ARCHES = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_NR_OFFSET, _ARCH_OFFSET, _ARG0_OFFSET = 0, 4, 16  # in struct seccomp_data (arg: low 32 bits)

ALLOWED_COUNT = len(_ALLOWED) + len(_SELF_ONLY)

Instruction = tuple[int, int, int, int]


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


def program(machine: str, pid: int) -> list[Instruction] | None:
    """The BPF program (code, jt, jf, k) for `machine`, or None where there is no table."""
    if machine not in _AUDIT_ARCHES:
        return None
    audit_arch, column = _AUDIT_ARCHES[machine]
    instructions: list[Instruction] = [
        # A call made through another ABI (32-bit int 0x80 on x86_64) has other numbers: kill.
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 1, 0, audit_arch),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _NR_OFFSET),
    ]
    if machine == "x86_64":  # the x32 ABI: same arch value, numbers with bit 30 set
        instructions += [(_JGE_K, 0, 1, 0x40000000), (_RET_K, 0, 0, _RET_KILL_PROCESS)]
    for numbers in _ALLOWED.values():
        instructions += _answer(numbers[column], _RET_ALLOW)
    for numbers in _SELF_ONLY.values():
        instructions += _self_only(numbers[column], pid)
    for numbers in _KILLED.values():
        instructions += _answer(numbers[column], _RET_KILL_PROCESS)
    instructions += _answer(_CLONE3, _RET_ERRNO | _ENOSYS)
    instructions.append((_RET_K, 0, 0, _RET_ERRNO | _EPERM))  # everything else
    return instructions


def _answer(number: int, action: int) -> list[Instruction]:
    return [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, action)]


def _self_only(number: int, pid: int) -> Iterator[Instruction]:
    # If it is this call: load the first argument; 0 or our pid jump to ALLOW, else EPERM.
    yield (_JEQ_K, 0, 5, number)
    yield (_LD_W_ABS, 0, 0, _ARG0_OFFSET)
    yield (_JEQ_K, 2, 0, pid)
    yield (_JEQ_K, 1, 0, 0)
    yield (_RET_K, 0, 0, _RET_ERRNO | _EPERM)
    yield (_RET_K, 0, 0, _RET_ALLOW)


def install() -> Layer:
    """Filter this thread's system calls from now on; irreversible. Needs no_new_privs first
    (or CAP_SYS_ADMIN), which `hardening` sets."""
    instructions = program(platform.machine(), os.getpid())
    if instructions is None:
        return Layer("seccomp", False, f"no system call table for {platform.machine()}")
    array = (_SockFilter * len(instructions))(*(_SockFilter(*op) for op in instructions))
    fprog = _SockFprog(len(instructions), array)
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        return Layer("seccomp", False, last_error())
    return Layer(
        "seccomp",
        True,
        f"{ALLOWED_COUNT} calls allowed, everything else refused: no files, sockets, "
        "processes or threads; exec and ptrace kill the process; signals only to itself",
    )
