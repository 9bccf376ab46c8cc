"""The seccomp allow-list: what the BPF program answers, and what the kernel does with it.

The program is checked by running it here on a small BPF interpreter, call by call, for both
architectures. The kernel's side runs in a fresh interpreter that confines itself exactly as a
sandboxed child does (`hardening.confine`) and then makes plain system calls of its own: no
submission, nothing hostile, only the filter under test.
"""

from __future__ import annotations

import json
import os
import platform
import re
import signal
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import seccomp
from grader.sandbox.scratch import remove_scratch

ROOT = Path(__file__).resolve().parents[2]
ARCHES = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}
ALLOW, KILL, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EPERM, ENOSYS = ERRNO | 1, ERRNO | 38
PID = 4242
# Calls that grading never makes and that a deny-list of dangerous calls lets through, by
# (x86_64, aarch64): files (Landlock limits where; seccomp refuses them all), metadata, limits,
# signal handlers, privileges, new filters.
REFUSED = {
    "read": (0, 63),
    "openat": (257, 56),
    "newfstatat": (262, 79),
    "close": (3, 57),
    "mkdirat": (258, 34),
    "fchmod": (91, 52),
    "getcwd": (79, 17),
    "uname": (63, 160),
    "ioctl": (16, 29),
    "prctl": (157, 167),
    "prlimit64": (302, 261),
    "setrlimit": (160, 164),
    "rt_sigaction": (13, 134),
    "nanosleep": (35, 101),
    "setuid": (105, 146),
    "seccomp": (317, 277),
    "landlock_create_ruleset": (444, 444),
}
# And calls that any deny-list would refuse too.
STILL_REFUSED = {"socket": (41, 198), "connect": (42, 203), "clone": (56, 220), "bpf": (321, 280)}


def run_bpf(program: list[seccomp.Instruction], nr: int, arch: int, arg0: int = 0) -> int:
    """What the kernel's classic-BPF interpreter answers for one call (the subset we emit)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif code in (0x15, 0x35):  # BPF_JMP | BPF_JEQ / BPF_JGE | BPF_K
            taken = accumulator == k if code == 0x15 else accumulator >= k
            pc += jt if taken else jf
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unexpected BPF instruction {code:#x}")
        pc += 1


def program_for(machine: str) -> tuple[list[seccomp.Instruction], int, int]:
    """The program, the architecture's audit value and its column in the tables."""
    program = seccomp.program(machine, PID)
    assert program is not None
    return program, *ARCHES[machine]


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_every_listed_call_is_allowed_and_nothing_else(machine: str) -> None:
    program, arch, column = program_for(machine)
    allowed = {name: numbers[column] for name, numbers in seccomp._ALLOWED.items()}
    answered = {name: run_bpf(program, nr, arch) for name, nr in allowed.items()}
    assert answered == dict.fromkeys(allowed, ALLOW)
    special = set(allowed.values()) | {n[column] for n in seccomp._SELF_ONLY.values()}
    special |= {n[column] for n in seccomp._KILLED.values()} | {435}
    # Every other number the kernel knows (and beyond) is refused with EPERM.
    others = {nr: run_bpf(program, nr, arch) for nr in range(600) if nr not in special}
    assert {nr: answer for nr, answer in others.items() if answer != EPERM} == {}
    assert len(allowed) + len(seccomp._SELF_ONLY) == seccomp.ALLOWED_COUNT


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_calls_grading_does_not_need_are_refused_with_eperm(machine: str) -> None:
    program, arch, column = program_for(machine)
    calls = {**REFUSED, **STILL_REFUSED}
    answered = {name: run_bpf(program, numbers[column], arch) for name, numbers in calls.items()}
    assert answered == dict.fromkeys(calls, EPERM)


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_exec_and_ptrace_kill_and_clone3_is_missing(machine: str) -> None:
    program, arch, column = program_for(machine)
    for numbers in seccomp._KILLED.values():
        assert run_bpf(program, numbers[column], arch) == KILL
    assert set(seccomp._KILLED) == {
        "execve",
        "execveat",
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
    }
    assert run_bpf(program, 435, arch) == ENOSYS  # glibc falls back to clone, refused


@pytest.mark.parametrize("machine", sorted(ARCHES))
@pytest.mark.parametrize("name", ["kill", "tgkill"])
def test_signals_go_only_to_the_child_itself(machine: str, name: str) -> None:
    program, arch, column = program_for(machine)
    nr = seccomp._SELF_ONLY[name][column]
    assert run_bpf(program, nr, arch, arg0=PID) == ALLOW
    assert run_bpf(program, nr, arch, arg0=0) == ALLOW  # its own process group: itself
    for other in (1, PID + 1, (-PID) & 0xFFFFFFFF, 0xFFFFFFFF):  # init, a sibling, groups, all
        assert run_bpf(program, nr, arch, arg0=other) == EPERM


def test_another_abi_kills() -> None:
    program, arch, _ = program_for("x86_64")
    i386 = 0x40000003
    assert run_bpf(program, 1, i386) == KILL  # int 0x80: 1 is exit there, write here
    assert run_bpf(program, 0x40000000 | 1, arch) == KILL  # x32
    assert seccomp.program("riscv64", PID) is None


@pytest.mark.skipif(
    not Path("/usr/include/asm-generic/unistd.h").exists()
    or not Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h").exists(),
    reason="the kernel's system call headers are not installed",
)
def test_the_numbers_are_the_kernels() -> None:
    x86 = _numbers("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", r"__NR_(\w+)")
    generic = _numbers("/usr/include/asm-generic/unistd.h", r"__NR(?:3264)?_(\w+)")
    generic["newfstatat"] = generic["fstatat"]  # __NR3264_fstatat on 64-bit arches
    tables = {**seccomp._ALLOWED, **seccomp._SELF_ONLY, **seccomp._KILLED, **REFUSED}
    tables |= STILL_REFUSED
    for name, (on_x86, on_arm) in tables.items():
        assert (x86[name], generic[name]) == (on_x86, on_arm), name
    assert x86["clone3"] == generic["clone3"] == 435


def _numbers(header: str, pattern: str) -> dict[str, int]:
    found = re.findall(rf"#define {pattern}\s+(\d+)", Path(header).read_text())
    return {name: int(number) for name, number in found}


# --- in the kernel ------------------------------------------------------------------------------

CONFINED = """
import json, os, sys, threading
from grader.sandbox import hardening
from grader.limits import SandboxLimits

scratch, parent, then, user = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
if user:  # as a sandboxed child does: every capability goes with root
    os.setgroups([])
    os.setresgid(int(user[0]), int(user[0]), int(user[0]))
    os.setresuid(int(user[0]), int(user[0]), int(user[0]))
layers = {layer.name: layer.active for layer in hardening.confine(SandboxLimits(), scratch)}
if then == "exec":
    os.execv("/bin/true", ["true"])
errors = {}

def attempt(name, call):
    try:
        call()
        errors[name] = 0
    except OSError as error:
        errors[name] = error.errno
    except RuntimeError:  # threading's way of saying the thread could not start
        errors[name] = "RuntimeError"

attempt("mkdir in the scratch dir", lambda: os.mkdir(os.path.join(scratch, "made")))
attempt("getcwd", os.getcwd)
attempt("fork", os.fork)
attempt("thread", lambda: threading.Thread(target=int).start())
attempt("signal the parent", lambda: os.kill(parent, 0))
attempt("signal itself", lambda: os.kill(os.getpid(), 0))
attempt("randomness", lambda: os.urandom(16))
os.write(1, json.dumps({"layers": layers, "errors": errors}).encode())
os._exit(0)
"""


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A scratch dir straight under /tmp, where an unprivileged uid can reach it."""
    path = Path(tempfile.mkdtemp(prefix="seccomp-test-"))
    try:
        yield path
    finally:
        remove_scratch(str(path))


def confined(scratch: Path, then: str = "report", user: int | None = None) -> tuple[int, str]:
    """Run CONFINED in a fresh interpreter that becomes `user` (None: stays as we are) before it
    confines itself; its exit status and output."""
    argv = [sys.executable, "-c", CONFINED, str(scratch), str(os.getpid()), then]
    if user is not None:
        os.chown(scratch, user, user)
        argv.append(str(user))
    child = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    return child.returncode, child.stdout


USERS = [None, 65534] if os.geteuid() == 0 else [None]
needs_a_table = pytest.mark.skipif(
    platform.machine() not in ARCHES, reason="no system call table for this architecture"
)


@needs_a_table
@pytest.mark.parametrize("user", USERS, ids=lambda user: "ours" if user is None else "nobody")
def test_a_confined_child_is_refused_what_is_not_on_the_list(
    scratch: Path, user: int | None
) -> None:
    """Unprivileged too: the filter needs no_new_privs, not CAP_SYS_ADMIN."""
    status, out = confined(scratch, user=user)
    assert status == 0
    report = json.loads(out)
    assert report["layers"]["seccomp"] and report["layers"]["no_new_privs"]
    refused = 1  # EPERM: seccomp's answer; Landlock's would be EACCES (13)
    assert report["errors"] == {
        # Landlock grants the scratch dir; seccomp refuses every file call all the same.
        "mkdir in the scratch dir": refused,
        "getcwd": refused,
        "fork": refused,
        "thread": "RuntimeError",
        "signal the parent": refused,
        "signal itself": 0,
        "randomness": 0,
    }
    assert not (scratch / "made").exists()


@needs_a_table
def test_exec_kills_a_confined_child(scratch: Path) -> None:
    status, out = confined(scratch, then="exec")
    assert status == -signal.SIGSYS
    assert out == ""
