"""The globals a submission's code runs in: the builtins ordinary nn.Module code needs, and the
hooks through which RestrictedPython's rewritten code reaches the runtime guards (`guards.py`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, NoReturn

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from grader.contract import Policy, Violation
from grader.sandbox.policy.guards import Guards
from grader.sandbox.policy.inplace import inplace
from grader.sandbox.policy.names import SUBMISSION_MODULE
from grader.sandbox.policy.output import StdoutCapture

# Builtins that ordinary nn.Module code uses; none reaches files, the interpreter or another
# object's internals. map, filter, zip, sorted, reversed, sum, list... iterate in C, past
# `_getiter_`: RestrictedPython leaves some out for that. Here what they could iterate unguarded
# is an array of objects, and none can be made: every call's result is checked
# (`_call_result_`), as is what they yield to the submission's own loops (`_getiter_`).
# Left out on purpose: open, input, breakpoint, help (I/O); eval, exec, compile (new unchecked
# code); globals, locals, vars, dir (namespaces); type (with 3 arguments it makes a class with any
# special method, with 1 it hands out `type` itself); memoryview, bytearray (raw buffers); hash
# (hashing a deeply nested tuple crashes CPython). getattr, hasattr, setattr and delattr are
# there as guards, which check a computed name as the source's `obj.name` is checked.
_SAFE_BUILTIN_NAMES = (
    "abs", "all", "any", "bool", "callable", "chr", "classmethod", "dict", "divmod", "enumerate",
    "filter", "float", "frozenset", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "next", "object", "ord", "pow", "property", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "zip",
    # Exceptions to raise and catch. BaseException's other children (SystemExit,
    # KeyboardInterrupt, GeneratorExit) are no business of a submission.
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "ImportError",
    "IndexError", "KeyError", "LookupError", "NotImplementedError", "OverflowError",
    "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
)  # fmt: skip


def restricted_globals(
    policy: Policy,
    stdout: StdoutCapture,
    on_violation: Callable[[Violation], NoReturn],
    private_names: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The globals to exec `compile_submission`'s code in: safe builtins and the guards.

    `private_names`: those the source defines (`CompiledSubmission.private_names`)."""
    guards = Guards(policy, stdout, on_violation, private_names)
    safe_builtins = {name: getattr(builtins, name) for name in _SAFE_BUILTIN_NAMES}
    safe_builtins |= {
        "__build_class__": guards.build_class,
        "__import__": guards.import_module,
        "getattr": guards.getattr_builtin,
        "hasattr": guards.hasattr_builtin,
        "setattr": guards.setattr_builtin,
        "delattr": guards.delattr_builtin,
    }
    return {
        "__builtins__": safe_builtins,
        "__name__": SUBMISSION_MODULE,
        "__metaclass__": type,  # RestrictedPython gives every class `metaclass=__metaclass__`
        "_getattr_": guards.attribute,
        "_getitem_": guards.item,
        "_write_": guards.write,
        "_print_": guards.printer,
        "_getiter_": guards.iterate,
        "_call_result_": guards.result,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_apply_": _apply,
        "_inplacevar_": inplace,
        "_inplace_attribute_": guards.inplace_attribute,
        "_inplace_item_": guards.inplace_item,
        "_key_": _KeyOf(),
    }


def _apply(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`f(*args, **kwargs)`, which RestrictedPython routes through `_apply_`."""
    return function(*args, **kwargs)


class _KeyOf:
    """`_key_[k]` is `k`: a subscript's key, slices included, as a value."""

    def __getitem__(self, key: object) -> object:
        return key
