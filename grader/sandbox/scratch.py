"""Scratch directories: where a sandboxed child may write, and how none outlives its run.

(Landlock lets a child write under its own scratch directory and nowhere else; seccomp lets it
open no file at all. The directory stays the child's working directory, and the one place a
child that got past both could leave anything.)

A sandbox keeps its children's directories under a root of its own (`ScratchRoot`), one new empty
directory per child (`make_scratch`). Whoever made a child's directory removes it once the child
and its process group are dead, however the run ended (`remove_scratch`), as the supervising side:
nothing depends on what the child did to its files, or on it saying so.

A process that dies without cleaning up (killed, crashed) leaves its root behind, so each root is
locked (flock) for as long as its sandbox lives, and a new sandbox first removes the roots that no
one holds: a restarted service does not pile up the directories of the ones before it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile

_ROOT_PREFIX = "autograder-scratch-"


class ScratchRoot:
    """A sandbox's own directory for its children's scratch directories, held while it lives."""

    def __init__(self, parent: str | None = None) -> None:
        parent = parent or tempfile.gettempdir()
        sweep_abandoned(parent)
        self.path, self._lock = _claim(parent)

    def close(self) -> None:
        """Remove the root and everything left in it; call once its children are dead."""
        if self._lock < 0:
            return
        remove_scratch(self.path)  # still locked, so no other sandbox's sweep races this one
        os.close(self._lock)
        self._lock = -1


def sweep_abandoned(parent: str) -> None:
    """Remove the roots under `parent` that no living sandbox holds: those of services that were
    killed or crashed, or that never closed their sandbox."""
    try:
        with os.scandir(parent) as entries:
            names = [entry.name for entry in entries if entry.name.startswith(_ROOT_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        lock = _lock(path)
        if lock is not None:
            try:
                remove_scratch(path)
            finally:
                os.close(lock)


def _claim(parent: str) -> tuple[str, int]:
    while True:
        path = tempfile.mkdtemp(prefix=_ROOT_PREFIX, dir=parent)
        # Traversable but not listable: each child, under its own uid, reaches its own scratch
        # dir and cannot see its siblings'.
        os.chmod(path, 0o711)
        lock = _lock(path)
        if lock is not None:
            return path, lock
        # Another sandbox's sweep took it between mkdtemp and the lock, and removes it.


def _lock(path: str) -> int | None:
    """A descriptor holding `path`'s lock, or None if someone else holds it (or it is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # gone, not a directory, or not ours to open
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, named = os.fstat(fd), os.lstat(path)
        # Still the directory at `path`, not one that a sweep removed before we got the lock.
        if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
            return fd
    except OSError:  # held by a living sandbox, or removed meanwhile
        pass
    os.close(fd)
    return None


def make_scratch(parent: str, uid: int | None) -> str:
    """A new empty directory under `parent` that only the child (`uid`, or ours) can enter."""
    path = tempfile.mkdtemp(prefix="scratch-", dir=parent)
    if uid is not None:
        os.chown(path, uid, uid)
    return path


def remove_scratch(path: str) -> None:
    """Remove a scratch directory whatever its child did to it; never raises.

    Call it once the child's process group is dead, so that nothing writes there any more.
    """
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        # The child took the permissions off its own directories. Root needs none; a service
        # whose children share its uid owns them, and gives them back before trying again.
        _give_back_directories(path)
        shutil.rmtree(path, ignore_errors=True)


def _give_back_directories(path: str) -> None:
    # Top down, so each directory can be listed once its parent is open again; links are never
    # followed (rmtree removes a link, not what it points to).
    stack = [path]
    while stack:
        directory = stack.pop()
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.lstat(directory).st_mode):
                os.chmod(directory, stat.S_IRWXU)
                with os.scandir(directory) as entries:
                    stack += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
