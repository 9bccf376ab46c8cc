"""What a sandboxed child does to itself before it runs a submission (layers 2 and 4 of the design).

In two steps, because the warm process forks each child before its job arrives:

- `prepare` right after the fork, while the child still has the warm process's privileges:
  a session of its own, no descriptor but the channel, an empty scratch directory, private
  namespaces, an unprivileged uid. These cost milliseconds, so they happen off the request path.
- `confine` once the job (and so its limits) has arrived, just before the submission runs:
  resource limits, no new privileges, Landlock (`landlock.py`), seccomp (`seccomp.py`).
  These cost microseconds.

Each layer is applied where the host allows it and reported as a `Layer` either way: a container
without CAP_SYS_ADMIN gets no namespaces, a kernel without Landlock no Landlock, and so on. Every
layer is assumed to fail alone, so each one stops what it can on its own. `probe_layers` runs both
steps in a throwaway child to tell what this host allows.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import resource

from grader.limits import SandboxLimits
from grader.sandbox import landlock, seccomp
from grader.sandbox.interface import Layer
from grader.sandbox.libc import last_error, libc
from grader.sandbox.scratch import make_scratch, remove_scratch

# The descriptor the channel ends up on: low, so RLIMIT_NOFILE can be small.
CHANNEL_FD = 3


def prepare(channel_fd: int, scratch: str, uid: int | None) -> list[Layer]:
    """Detach from the warm process: run this first in a freshly forked child.

    `uid` is the slot's own unprivileged uid, or None to keep the current one (not root).
    Afterwards the channel is `CHANNEL_FD` and fds 0-2 are /dev/null.
    """
    # A session and process group of its own: the supervisor kills the whole group at the
    # deadline, and nothing the child does can signal the warm process's group by accident.
    if os.getsid(0) != os.getpid():
        os.setsid()
    _keep_only_channel(channel_fd)
    os.chdir(scratch)
    return [_enter_namespaces(), _drop_to_uid(uid)]


def confine(limits: SandboxLimits, scratch: str) -> list[Layer]:
    """Apply the job's limits and shut every door the submission does not need; irreversible."""
    return [
        _set_limits(limits),
        _forbid_new_privileges(),
        landlock.install(scratch),
        seccomp.install(),
    ]


def probe_layers(uid: int | None, scratch_root: str) -> list[Layer]:
    """Which layers this host lets a child apply: fork one, harden it, read back its report.

    Call it from a single-threaded process (the warm process, or a fresh interpreter).
    """
    scratch = make_scratch(scratch_root, uid)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the probe child
        try:
            layers = prepare(write_end, scratch, uid) + confine(SandboxLimits(), scratch)
            os.write(CHANNEL_FD, json.dumps([vars(layer) for layer in layers]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        report = reader.read()
    os.waitpid(pid, 0)
    remove_scratch(scratch)
    if not report:
        return [Layer("hardening", False, "the probe child died while hardening itself")]
    return [Layer(**fields) for fields in json.loads(report)]


def slot_uid(base: int, slot: int) -> int | None:
    """The uid a slot's children drop to: `base + slot` where we are root, else none (keep ours)."""
    return base + slot if os.geteuid() == 0 else None


def _keep_only_channel(channel_fd: int) -> None:
    os.dup2(channel_fd, CHANNEL_FD, inheritable=False)
    # Student prints are captured by the policy and returned inside outcomes; whatever reaches
    # fds 1 and 2 anyway (a C extension writing directly) must not mix with the result channel.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    # Every other descriptor is the warm process's (its control socket, its siblings' pidfds):
    # the submission must not be able to reach any of them.
    os.closerange(CHANNEL_FD + 1, 2**31 - 1)


def _enter_namespaces() -> Layer:
    # A network namespace of its own has only a down loopback: no network even if a socket
    # could be made. A private IPC namespace keeps System V shared memory and message queues
    # from outliving the run for the next submission to find. Needs CAP_SYS_ADMIN.
    clone_newnet, clone_newipc = 0x40000000, 0x08000000
    if libc.unshare(clone_newnet | clone_newipc) != 0:
        return Layer("namespaces", False, f"unshare: {last_error()}")
    return Layer("namespaces", True, "private network (no interfaces up) and IPC")


def _drop_to_uid(uid: int | None) -> Layer:
    # A uid of its own per slot: RLIMIT_NPROC is counted per uid and never applies to root, and
    # the child can neither signal nor read the files of the service or of other slots.
    if uid is None:
        shared = f"not root: every slot runs as the service's own uid {os.getuid()}"
        return Layer("unprivileged_uid", False, shared)
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as error:
        return Layer("unprivileged_uid", False, f"setuid {uid}: {error.strerror}")
    return Layer("unprivileged_uid", True, f"uid and gid {uid}")


def _set_limits(limits: SandboxLimits) -> Layer:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + limits.cpu_s)
    # CPU seconds (whole seconds, counted from the fork): stops busy loops. SIGXCPU at the soft
    # limit, SIGKILL a second later in case the submission found a way to ignore SIGXCPU.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    # Address space, not RLIMIT_DATA: shared anonymous mappings (`mmap.mmap(-1, n)`) escape
    # RLIMIT_DATA but not RLIMIT_AS. Counted on top of what the warm process already maps (about
    # 0.6 GB of torch, mostly shared and untouched), so the budget is what the submission adds.
    address_space = _mapped_bytes() + limits.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    # File size: a write past it fails with EFBIG (Python ignores SIGXFSZ). Stops filling the
    # disk through the scratch directory, the only place the child can write.
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
    # Open descriptors: stdio and the channel are 0-3, so this is what the submission may open.
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    # No new process or thread for this uid: the fork-bomb stop where the uid is not root
    # (seccomp stops it everywhere). Torch runs on the one thread the warm process gave it.
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    # No core files: a crash must not write the process's memory to disk.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return Layer(
        "rlimits",
        True,
        f"cpu {cpu} s, address space +{limits.memory_bytes >> 20} MiB, "
        f"file size {limits.file_size_bytes} B, {limits.open_files} fds, no processes, no cores",
    )


def _mapped_bytes() -> int:
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _prctl(option: int, value: int) -> str | None:
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        return last_error()
    return None


_PR_SET_DUMPABLE = 4


def protect_supervisor() -> None:
    """Make the grading process itself not dumpable, before it starts children.

    It holds the secret, the references and the database URL. Where every slot shares the
    service's uid (a container cannot switch uids) and Landlock is missing, a child could
    otherwise read its /proc/<pid>/environ and /proc/<pid>/mem: not dumpable, those belong to
    root. Costs nothing but attaching a debugger as the same uid.
    """
    _prctl(_PR_SET_DUMPABLE, 0)


def _forbid_new_privileges() -> Layer:
    # No new privileges: no setuid binary or file capability can raise the child's rights, and
    # it is what lets an unprivileged process install Landlock and seccomp filters.
    pr_set_no_new_privs = 38
    failure = _prctl(pr_set_no_new_privs, 1)
    if failure:
        return Layer("no_new_privs", False, failure)
    # Not dumpable: a process with the same uid (another slot, where every slot shares the
    # service's uid) can neither ptrace it nor read its /proc/<pid>/mem.
    _prctl(_PR_SET_DUMPABLE, 0)
    return Layer("no_new_privs", True, "no new privileges, not dumpable")
