"""What a runtime refusal may say, and the line of the submission it points at.

A refusal's message reaches the report on every test, visible or hidden, so it must carry
nothing computed from a test's inputs: only names the source spells out or a library defines.
"""

from __future__ import annotations

import sys
import types

from grader.call_execution import SUBMISSION_FILENAME
from grader.sandbox.policy import autograd

_COMPUTED_NAME = "<a name computed while running>"


def submission_line() -> int | None:
    """The line of the submission that is running: that of its innermost frame."""
    frame = _submission_frame()
    return None if frame is None else frame.f_lineno


def _submission_frame() -> types.FrameType | None:
    """The innermost frame of the submission's own code."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == SUBMISSION_FILENAME:
            return frame
        frame = frame.f_back
    return None


def quotable(obj: object, name: str) -> str:
    """`name` as a refusal may repeat it: one that the running code of the submission spells
    out, or one that `obj`'s module or class defines; any other name stands in as
    `_COMPUTED_NAME`.

    Why: a name built at run time (`getattr(torch, str(x.tolist()))` while a hidden test runs)
    would carry that test's inputs out with it. A name from the source, a module or a class
    carries no more than the choice among them. Not the names of an instance: an nn.Module
    registers submodules and buffers under names computed at run time.
    """
    frame = _submission_frame()
    if frame is not None and (name in frame.f_code.co_names or name in frame.f_code.co_consts):
        return name
    namespace = obj if isinstance(obj, type | types.ModuleType) else type(obj)
    try:
        if name in dir(namespace):  # never a lookup: a module's lazy __getattr__ could import
            return name
    except Exception:  # a broken __dir__ quotes nothing
        pass
    return _COMPUTED_NAME


def unavailable_refusal(library: str, module: types.ModuleType, name: str) -> str:
    """The refusal of `module.name`, which the allow-list of `library` (the module's name) leaves
    out."""
    dotted = f"{library}.{name}"
    explained = autograd.refusal(dotted)
    if explained is not None:
        return explained
    if dotted in sys.modules:
        return f"`{dotted}` is a module this exercise does not let you use"
    return (
        f"`{library}.{quotable(module, name)}` is not available in the grading sandbox: only "
        f"the computational part of `{library}` is"
    )


def module_name(module: types.ModuleType) -> str:
    return str(vars(module).get("__name__", "?"))


def write_refusal(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        what = f"the module `{module_name(obj)}`"
    elif isinstance(obj, type):
        what = f"the class `{obj.__name__}`"
    elif callable(obj):
        what = "a function"
    else:
        what = f"a `{type(obj).__name__}` object"
    return (
        f"changing {what} is not allowed: a submission may change only its own objects, lists, "
        "dicts, tensors, arrays and modules (no monkeypatching)"
    )
