"""The C library, for the system calls that Python's `os` does not wrap (unshare, prctl,
Landlock's), and the reason the last of them failed."""

from __future__ import annotations

import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def last_error() -> str:
    """Why the last call through `libc` failed, as the kernel said it (errno's text)."""
    return os.strerror(ctypes.get_errno())
