"""Attributes and calls of library objects refused for what they reach: files, raw memory, the
interpreter. Modules are judged by allow-list (`modules`); objects here, by name, since every
object of every library cannot be listed.

Memory: with library objects alone a submission could read and write its own process's memory
(sparse tensors densified from indices it wrote, arrays freed under a view, arrays of object
pointers, segment reductions without bounds checks). A memory primitive gives a submission no
more than its own process, which holds nothing secret (the principle behind the process layer);
these rules close the primitives that are known, so that a student meets a refusal, not a crash
or a silent read.
"""

from __future__ import annotations

import functools
import types
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from grader.sandbox.policy.formatter import FORMAT_METHODS
from grader.sandbox.policy.patches import Refuse

# On any object: the name means the same danger on every library's objects.
_ANY_OBJECT: Mapping[str, str] = {
    "tofile": "writes a file",
    "dump": "writes a pickle to a file",
    "dumps": "makes a pickle",
    "ctypes": "hands out raw memory pointers",
    "data_ptr": "hands out a raw memory pointer",
    "storage": "reaches a tensor's raw storage, whose class reads and writes files",
    "untyped_storage": "reaches a tensor's raw storage, whose class reads and writes files",
    "storage_type": "reaches the storage classes, which read and write files",
    "from_file": "reads and writes files",
    "share_memory_": "moves tensors into shared memory that other processes can map",
    "share_memory": "moves tensors into shared memory that other processes can map",
    "compile": "starts a compiler that writes files and runs generated code",
    "sparse_resize_": "reshapes a sparse tensor's buffers unchecked, writing outside them",
    "sparse_resize_and_clear_": "reshapes a sparse tensor's buffers unchecked",
}

_SPARSE_ALIAS = (
    "hands out a sparse tensor's index or value buffer itself: indices written through it go "
    "unchecked, and densifying then writes outside the result"
)
_SPARSE_MAKER = "makes a sparse tensor, whose index buffers are reachable unchecked"
# On tensors only: elsewhere these names are ordinary (`dict.values()`, `topk(...).indices`).
_TENSOR: Mapping[str, str] = {
    "type": "imports any module a string names; use `.to(dtype)` instead",
    "indices": _SPARSE_ALIAS,
    "values": _SPARSE_ALIAS,
    "crow_indices": _SPARSE_ALIAS,
    "col_indices": _SPARSE_ALIAS,
    "ccol_indices": _SPARSE_ALIAS,
    "row_indices": _SPARSE_ALIAS,
    "to_sparse": _SPARSE_MAKER,
    "to_sparse_coo": _SPARSE_MAKER,
    "to_sparse_csr": _SPARSE_MAKER,
    "to_sparse_csc": _SPARSE_MAKER,
    "to_sparse_bsr": _SPARSE_MAKER,
    "to_sparse_bsc": _SPARSE_MAKER,
}
# On modules too (`Module.type(dst_type)` converts like `Tensor.type`).
_TORCH_OBJECT = frozenset({"type"})


def attribute_refusal(obj: object, name: str) -> str | None:
    """Why `obj.name` may not be read, `obj` being anything but a module; None when it may."""
    if holds_objects(obj):
        return OBJECT_ARRAYS
    reason = _ANY_OBJECT.get(name) or _torch_object_reason(obj, name)
    if name == "mro" and isinstance(obj, type):
        reason = "hands out the classes it derives from, numpy's unchecked `ndarray` among them"
    if name in FORMAT_METHODS and isinstance(obj, type) and issubclass(obj, str):
        reason = "formats past the sandbox's checks; call it on a string instead"
    return (
        None if reason is None else f"`.{name}` is not allowed in the grading sandbox: it {reason}"
    )


def _torch_object_reason(obj: object, name: str) -> str | None:
    reason = _TENSOR.get(name)
    if reason is None:
        return None
    if _is_a(obj, torch.Tensor) or (name in _TORCH_OBJECT and _is_a(obj, torch.nn.Module)):
        return reason
    return None


def _is_a(obj: object, cls: type) -> bool:
    """An instance of `cls`, or `cls` or a subclass itself (`torch.Tensor.values(x)`)."""
    return isinstance(obj, cls) or (isinstance(obj, type) and issubclass(obj, cls))


# --- arrays of Python objects -------------------------------------------------------------------

OBJECT_ARRAYS = (
    "numpy arrays of Python objects (`dtype=object`) are not allowed in the grading sandbox: "
    "their elements are raw pointers to objects, which other array operations could forge; "
    "use a numeric dtype"
)


# What `holds_objects` can be true of.
NUMPY_VALUES = (np.ndarray, np.generic, np.dtype)


def holds_objects(value: object) -> bool:
    """An ndarray, numpy scalar (a structured `np.void`) or dtype whose elements are (or hold)
    pointers to Python objects."""
    if isinstance(value, np.ndarray | np.generic):
        return bool(value.dtype.hasobject)
    return isinstance(value, np.dtype) and bool(value.hasobject)


def any_holds_objects(values: tuple[object, ...] | list[object]) -> bool:
    """Whether an item of `values` holds objects: one C-speed pass over the types first, since
    a list can be long and is rarely of arrays."""
    kinds = set(map(type, values))
    if not any(issubclass(kind, NUMPY_VALUES) for kind in kinds):
        return False
    return any(holds_objects(value) for value in values)


# Exact types of values that are neither arrays of objects nor classes: most values read and
# returned, passed with one look.
HOLDS_NO_OBJECTS = frozenset(
    {
        torch.Tensor, torch.nn.Parameter, torch.Size, float, int, bool, str, type(None),
        types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.BuiltinMethodType,
    }
)  # fmt: skip

# Iterables whose items cannot be arrays of objects: numbers, characters, tensors, the rows of an
# array that holds none, a dict's or set's keys (arrays are unhashable).
ITEMS_HOLD_NO_OBJECTS = (range, str, bytes, torch.Tensor, np.ndarray, dict, set, frozenset)

# numpy's classes that read raw bytes as records (`np.void(data, dtype=[("p", "O")])`,
# `np.recarray(shape, dtype, buf=...)`), whose object fields are then pointers of the caller's
# choosing, or that make arrays of objects (`np.object_([...])`). Refused however reached: by
# name from numpy (`modules`) and by identity elsewhere (`np.dtype("V8").type`).
RAW_RECORD_CLASSES: tuple[type, ...] = (np.void, np.record, np.recarray, np.object_)


def raw_class_refusal(cls: type) -> str:
    return (
        f"`numpy.{cls.__name__}` is not allowed in the grading sandbox: it reads raw bytes as "
        "records or makes arrays of Python objects; use numeric arrays"
    )


def array_class(refuse: Refuse) -> type:
    """`numpy.ndarray` as the submission reads it: the same class to `isinstance`, `issubclass`
    and annotations, but a constructor that refuses to hand out an array of objects.
    `np.ndarray(shape, dtype, buffer=...)` reads any bytes as the array's elements: with an
    object dtype (or a structured one with an object field) as pointers to objects at addresses
    of the caller's choosing, which printing, iterating or any numpy function then follows. The
    array is checked before anything can follow a pointer in it, however the constructor is
    called (`map(np.ndarray, ...)` calls it from C, past any guard of the submission's calls)."""

    class CheckedArrayClass(type):
        def __instancecheck__(cls, instance: object) -> bool:
            return isinstance(instance, np.ndarray)

        def __subclasscheck__(cls, subclass: type) -> bool:
            return issubclass(subclass, np.ndarray)

        def __call__(cls, *args: Any, **kwargs: Any) -> np.ndarray:
            array = np.ndarray(*args, **kwargs)
            if array.dtype.hasobject:
                refuse(OBJECT_ARRAYS)
            return array

    return CheckedArrayClass("ndarray", (), {"__module__": "numpy", "__qualname__": "ndarray"})


def names_object_dtype(text: str) -> bool:
    """Whether numpy reads `text` as a dtype of Python objects ("O", "object", "f8,O")."""
    if len(text) > 64:  # no dtype a student writes is longer; the parse is bounded
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(np.dtype(text).hasobject)
    except Exception:  # not a dtype at all: any text may be an argument
        return False


# --- calls whose arguments decide ---------------------------------------------------------------


@dataclass(frozen=True)
class _ArgumentRule:
    applies: Callable[[object], bool]  # to the object the function is read from
    keyword: str
    refused: Callable[[Any], bool]  # given the argument's value
    spelled: str  # the refused argument as a refusal shows it (never the value passed)
    reason: str


# By the attribute's name. Only for attributes of objects: a module's function bound by
# `from module import name` is looked up past the guards, so a module's unsafe function is
# refused outright instead (`torch.segment_reduce`, in `modules`).
_ARGUMENT_RULES: Mapping[str, _ArgumentRule] = {
    "resize": _ArgumentRule(
        lambda owner: _is_a(owner, np.ndarray),
        "refcheck",
        lambda refcheck: not refcheck,
        "refcheck=False",
        "frees the array's memory even while other arrays still view it",
    ),
}


def checked_call(owner: object, name: str, value: Any, refuse: Refuse) -> Any:
    """`value`, read as `owner.name`; where its arguments decide whether it is safe, wrapped
    to check them before it runs."""
    rule = _ARGUMENT_RULES.get(name)
    if rule is None or not callable(value) or not rule.applies(owner):
        return value
    message = (
        f"`.{name}(..., {rule.spelled})` is not allowed in the grading sandbox: it {rule.reason}"
    )

    @functools.wraps(value)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if rule.keyword in kwargs and rule.refused(kwargs[rule.keyword]):
            refuse(message)
        return value(*args, **kwargs)

    return checked
