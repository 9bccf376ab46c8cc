"""What a sandboxed child does to itself before it runs a submission (layers 2 and 4 of the design).

In two steps, because the warm process forks each child before its job arrives:

- `prepare` right after the fork, while the child still has the warm process's privileges:
  a session of its own, no descriptor but the channel, an empty scratch directory, private
  namespaces, an unprivileged uid. These cost milliseconds, so they happen off the request path.
- `confine` once the job (and so its limits) has arrived, just before the submission runs:
  resource limits, no new privileges, Landlock, seccomp. These cost microseconds.

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
import platform
import resource
import shutil
import tempfile
from collections.abc import Iterator

from grader.sandbox.interface import Layer
from grader.sandbox.limits import SandboxLimits

# The descriptor the channel ends up on: low, so RLIMIT_NOFILE can be small.
CHANNEL_FD = 3

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


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
        _restrict_filesystem(scratch),
        _filter_syscalls(),
    ]


def probe_layers(uid: int | None) -> list[Layer]:
    """Which layers this host lets a child apply: fork one, harden it, read back its report.

    Call it from a single-threaded process (the warm process, or a fresh interpreter).
    """
    scratch = make_scratch(tempfile.gettempdir(), uid)
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
    shutil.rmtree(scratch, ignore_errors=True)
    if not report:
        return [Layer("hardening", False, "the probe child died while hardening itself")]
    return [Layer(**fields) for fields in json.loads(report)]


def slot_uid(base: int, slot: int) -> int | None:
    """The uid a slot's children drop to: `base + slot` where we are root, else none (keep ours)."""
    return base + slot if os.geteuid() == 0 else None


def make_scratch(parent: str, uid: int | None) -> str:
    """A new empty directory under `parent` that only the child (`uid`, or ours) can enter."""
    path = tempfile.mkdtemp(prefix="scratch-", dir=parent)
    if uid is not None:
        os.chown(path, uid, uid)
    return path


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
    if _libc.unshare(clone_newnet | clone_newipc) != 0:
        return Layer("namespaces", False, f"unshare: {os.strerror(ctypes.get_errno())}")
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
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        return os.strerror(ctypes.get_errno())
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


# Landlock (Linux 5.13+): an unprivileged process gives up filesystem access for itself.
_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_RULE_PATH_BENEATH = 1
# Inside the scratch dir: plain files and directories only (no execute, device node, socket,
# fifo, symlink or cross-directory link), by their bits in linux/landlock.h.
_FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR, _FS_REMOVE_DIR, _FS_REMOVE_FILE = 2, 4, 8, 16, 32
_FS_MAKE_DIR, _FS_MAKE_REG, _FS_TRUNCATE = 1 << 7, 1 << 8, 1 << 14
_FS_SCRATCH_RIGHTS = (
    _FS_WRITE_FILE
    | _FS_READ_FILE
    | _FS_READ_DIR
    | _FS_REMOVE_DIR
    | _FS_REMOVE_FILE
    | _FS_MAKE_DIR
    | _FS_MAKE_REG
    | _FS_TRUNCATE
)
# Every filesystem right each ABI knows (refer came with 2, truncate 3, device ioctl 5): all of
# them are handled, so all are denied outside the scratch dir.
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled)."""
    version = _libc.syscall(_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


def _restrict_filesystem(scratch: str) -> Layer:
    # Landlock: no path outside the scratch directory can be opened at all, for reading or
    # writing: not the reference, not other submissions, not /proc of another process, not the
    # Python sources. Everything the submission needs was imported by the warm process.
    abi = landlock_abi()
    if abi == 0:
        return Layer("landlock", False, "the kernel has no Landlock")
    fs_rights = _FS_RIGHTS_BY_ABI[max(v for v in _FS_RIGHTS_BY_ABI if v <= abi)]
    attr = _RulesetAttr(handled_access_fs=fs_rights)
    if abi >= 4:
        attr.handled_access_net = 0b11  # no TCP bind or connect (no rule grants any)
    if abi >= 6:
        attr.scoped = 0b11  # no signals, no abstract unix sockets outside the sandbox
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _libc.syscall(_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return Layer("landlock", False, f"create ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        failure = _landlock_allow(int(ruleset), scratch, _FS_SCRATCH_RIGHTS & fs_rights)
        if failure is None and _libc.syscall(_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            failure = f"restrict self: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(ruleset)
    if failure:
        return Layer("landlock", False, failure)
    return Layer("landlock", True, f"ABI {abi}: files only under the scratch dir")


def _landlock_allow(ruleset: int, path: str, rights: int) -> str | None:
    directory = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=directory)
        if (
            _libc.syscall(
                _LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
            )
            != 0
        ):
            return f"add rule: {os.strerror(ctypes.get_errno())}"
        return None
    finally:
        os.close(directory)


# Seccomp: the kernel answers these system calls with EPERM however they are reached (ctypes,
# a C extension, a bug in the policy). Numbers on x86_64 and aarch64; None: no such call there.
_DENIED_SYSCALLS: dict[str, tuple[int | None, int | None]] = {
    # No network: no socket can be made, connected or accepted (the channel already exists).
    "socket": (41, 198),
    "socketpair": (53, 199),
    "connect": (42, 203),
    "bind": (49, 200),
    "listen": (50, 201),
    "accept": (43, 202),
    "accept4": (288, 242),
    # No new program and no new process or thread: stops exec-ing a shell and fork/thread bombs.
    "execve": (59, 221),
    "execveat": (322, 281),
    "fork": (57, None),
    "vfork": (58, None),
    "clone": (56, 220),
    # No reaching into other processes (the supervisor, the warm process, another slot).
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "tkill": (200, 130),
    "rt_sigqueueinfo": (129, 138),
    "rt_tgsigqueueinfo": (297, 240),
    "pidfd_open": (434, 434),
    "pidfd_send_signal": (424, 424),
    "pidfd_getfd": (438, 438),
    "kcmp": (312, 272),
    "process_madvise": (440, 440),
    "process_mrelease": (448, 448),
    "migrate_pages": (256, 238),
    "move_pages": (279, 239),
    # No slowing other processes down: a lowered priority or a pinned CPU makes a sibling time out.
    "setpriority": (141, 140),
    "sched_setaffinity": (203, 122),
    "sched_setscheduler": (144, 119),
    "sched_setparam": (142, 118),
    "sched_setattr": (314, 274),
    "ioprio_set": (251, 30),
    # No state that outlives the run for the next submission to find (the IPC namespace does the
    # same where the host allows namespaces), and no memory outside RLIMIT_AS's accounting.
    "shmget": (29, 194),
    "shmat": (30, 196),
    "shmctl": (31, 195),
    "shmdt": (67, 197),
    "semget": (64, 190),
    "semop": (65, 193),
    "semctl": (66, 191),
    "semtimedop": (220, 192),
    "msgget": (68, 186),
    "msgsnd": (69, 189),
    "msgrcv": (70, 188),
    "msgctl": (71, 187),
    "mq_open": (240, 180),
    "mq_unlink": (241, 181),
    "memfd_create": (319, 279),
    "memfd_secret": (447, 447),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    # No changing the filesystem's shape or leaving the namespaces.
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "unshare": (272, 97),
    "setns": (308, 268),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "mount_setattr": (442, 442),
    "mknod": (133, None),
    "mknodat": (259, 33),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    # Kernel attack surface no tensor code needs (io_uring also bypasses per-call filtering).
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "fanotify_init": (300, 262),
    "personality": (135, 92),
    "syslog": (103, 116),
    "modify_ldt": (154, None),
    "iopl": (172, None),
    "ioperm": (173, None),
    "vhangup": (153, 58),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "reboot": (169, 142),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "acct": (163, 89),
    "quotactl": (179, 60),
}
# clone3 gets ENOSYS, not EPERM: glibc then falls back to clone, which the filter refuses.
_CLONE3 = 435
# Calls allowed only on the child itself: the first argument must be 0 or its own pid.
# kill(0 or self) and tgkill(self) let abort() and raise() work; prlimit64 on another process
# could lower a sibling's limits and make it fail.
_SELF_ONLY_SYSCALLS: dict[str, tuple[int, int]] = {
    "kill": (62, 129),
    "tgkill": (234, 131),
    "prlimit64": (302, 261),
}
_AUDIT_ARCHES = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}

_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_NR_OFFSET, _ARCH_OFFSET, _ARG0_OFFSET = 0, 4, 16  # in struct seccomp_data (arg: low 32 bits)


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


Instruction = tuple[int, int, int, int]


def seccomp_program(machine: str, pid: int) -> list[Instruction] | None:
    """The BPF program (code, jt, jf, k) for `machine`, or None where there is no table."""
    if machine not in _AUDIT_ARCHES:
        return None
    audit_arch, column = _AUDIT_ARCHES[machine]
    program: list[Instruction] = [
        # A call made through another ABI (32-bit int 0x80 on x86_64) has other numbers: kill.
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 1, 0, audit_arch),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _NR_OFFSET),
    ]
    if machine == "x86_64":  # the x32 ABI: same arch value, numbers with bit 30 set
        program += [(_JGE_K, 0, 1, 0x40000000), (_RET_K, 0, 0, _RET_KILL_PROCESS)]
    for numbers in _DENIED_SYSCALLS.values():
        number = numbers[column]
        if number is not None:
            program += _deny(number, _RET_ERRNO | 1)  # EPERM
    program += _deny(_CLONE3, _RET_ERRNO | 38)  # ENOSYS
    for numbers in _SELF_ONLY_SYSCALLS.values():
        program += list(_self_only(numbers[column], pid))
    program.append((_RET_K, 0, 0, _RET_ALLOW))
    return program


def _deny(number: int, action: int) -> list[Instruction]:
    return [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, action)]


def _self_only(number: int, pid: int) -> Iterator[Instruction]:
    # If it is this call: load the first argument; 0 or our pid jump to ALLOW, else EPERM.
    yield (_JEQ_K, 0, 5, number)
    yield (_LD_W_ABS, 0, 0, _ARG0_OFFSET)
    yield (_JEQ_K, 2, 0, pid)
    yield (_JEQ_K, 1, 0, 0)
    yield (_RET_K, 0, 0, _RET_ERRNO | 1)
    yield (_RET_K, 0, 0, _RET_ALLOW)


def _filter_syscalls() -> Layer:
    program = seccomp_program(platform.machine(), os.getpid())
    if program is None:
        return Layer("seccomp", False, f"no system call table for {platform.machine()}")
    instructions = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    fprog = _SockFprog(len(program), instructions)
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if _libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        return Layer("seccomp", False, os.strerror(ctypes.get_errno()))
    return Layer(
        "seccomp",
        True,
        f"{len(_DENIED_SYSCALLS) + 1} calls refused: sockets, exec, fork/clone, ptrace, "
        "signals to other processes, mounts, namespaces, System V IPC",
    )
