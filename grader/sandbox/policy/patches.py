"""What the sandbox changes in the libraries for one job, and puts back afterwards.

The runtime guards see only what the submission's own code does. Code that torch runs for it (a
layer's forward, a container's `update`) passes no guard, so the checks that must hold whoever
calls (`forbidden_calls`, `naming`) are put into the libraries themselves, in the child, before
the submission's code runs: a kernel registered over a torch operator, a function or method
replaced in its module or class.

In the real sandbox the child exits after its one job and nothing needs putting back; where a
job runs in the caller's process (tests, the benchmark's floor) everything is undone on exit.

The submission cannot undo any of it: `torch.library`, `torch.ops` and `torch._C` are not on
torch's allow-list, private and double-underscore names are refused, modules and classes are
not writable (`_write_`), and the handles live in frames that it cannot reach (frame attributes
are refused).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import torch

# What a check calls to end the run, with a message in the student's terms.
Refuse = Callable[[str], NoReturn]

_ABSENT = object()


class Patches:
    """Attributes replaced and operator kernels registered, undone in reverse order."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []
        self._library: torch.library.Library | None = None

    def replace(self, owner: object, name: str, value: object) -> None:
        """Set `owner.name` (a module's function, a class's method) to `value` for the job."""
        before = vars(owner).get(name, _ABSENT)
        setattr(owner, name, value)
        self._undo.append(lambda: _put_back(owner, name, before))

    def kernel(self, operator: str, kernel: Callable[..., object]) -> None:
        """Register `kernel` for the aten `operator` where a CPU call of it dispatches: the
        composite kernel itself for an operator that torch writes in terms of others (it runs
        before any backend key is reached), else the CPU key."""
        composite = "CompositeImplicitAutograd"
        key = (
            composite
            if torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{operator}", composite)
            else "CPU"
        )
        if self._library is None:
            # torch.library has no type annotations.
            self._library = torch.library.Library("aten", "IMPL")  # type: ignore[no-untyped-call]
            self._undo.append(self._library._destroy)
        with warnings.catch_warnings():
            # torch warns, once per process, that a kernel replaces one it had: that is the point.
            warnings.simplefilter("ignore")
            self._library.impl(operator, kernel, key)  # type: ignore[no-untyped-call]

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


def _put_back(owner: object, name: str, before: object) -> None:
    if before is _ABSENT:
        delattr(owner, name)
    else:
        setattr(owner, name, before)


@contextmanager
def patched() -> Iterator[Patches]:
    patches = Patches()
    try:
        yield patches
    finally:
        patches.undo()
