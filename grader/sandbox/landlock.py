"""The child's Landlock ruleset (Linux 5.13+): files only under its scratch directory.

An unprivileged process gives up filesystem access for itself: once `install` has run, no path
outside the scratch directory can be opened at all, for reading or writing: not the reference,
not other submissions, not /proc of another process, not the Python sources. Everything the
submission needs was imported by the warm process. Where the kernel's ABI allows, the ruleset
also refuses TCP and signals or abstract unix sockets that leave the sandbox.
"""

from __future__ import annotations

import ctypes
import os

from grader.sandbox.interface import Layer
from grader.sandbox.libc import last_error, libc

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
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


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled)."""
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


def install(scratch: str) -> Layer:
    """Restrict this process, irreversibly, to files under `scratch`."""
    version = abi()
    if version == 0:
        return Layer("landlock", False, "the kernel has no Landlock")
    fs_rights = _FS_RIGHTS_BY_ABI[max(v for v in _FS_RIGHTS_BY_ABI if v <= version)]
    attr = _RulesetAttr(handled_access_fs=fs_rights)
    if version >= 4:
        attr.handled_access_net = 0b11  # no TCP bind or connect (no rule grants any)
    if version >= 6:
        attr.scoped = 0b11  # no signals, no abstract unix sockets outside the sandbox
    size = 8 if version < 4 else 16 if version < 6 else 24
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return Layer("landlock", False, f"create ruleset: {last_error()}")
    try:
        failure = _allow(int(ruleset), scratch, _FS_SCRATCH_RIGHTS & fs_rights)
        if failure is None and libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            failure = f"restrict self: {last_error()}"
    finally:
        os.close(ruleset)
    if failure:
        return Layer("landlock", False, failure)
    return Layer("landlock", True, f"ABI {version}: files only under the scratch dir")


def _allow(ruleset: int, path: str, rights: int) -> str | None:
    directory = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=directory)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            return f"add rule: {last_error()}"
        return None
    finally:
        os.close(directory)
