"""Which names a submission may bind, and which attributes it may touch, judged by name alone.

Both layers ask: the static layer about every name and attribute the source spells out, the
runtime guards about names computed while it runs (`getattr(self, f"head_{i}")`). By danger:

- Double-underscore names reach Python's internals (`__class__`, `__globals__`, `__subclasses__`)
  or change how Python treats an object (`__eq__`, `__getattr__`): refused, but for the special
  methods a class may define harmlessly, `__init__` read through `super()`, and the inert
  module metadata (`__all__`).
- Names that start and end with `_` (`_getattr_`, `_write_`, ...) and `_print` are what the
  rewritten code calls for every attribute, item, write and print: binding one would replace a
  guard. Reserved.
- Other names that start with `_` are private. Bound in the submission's own code (`_helper`,
  `def _split_heads`) they are its own business. As attributes, the runtime guards decide, object
  by object: the submission's own names on its own classes and instances pass, a library's
  private names (`torch._C`, `module._parameters`) do not (see `ownership`).
- Frame, traceback and code attributes would let code look into the grader's frames: refused on
  anything.
"""

from __future__ import annotations

from collections.abc import Iterable

from RestrictedPython.transformer import FORBIDDEN_FUNC_NAMES, INSPECT_ATTRIBUTES

from grader.sandbox.policy import autograd

# The `__name__` the submission runs under, hence the `__module__` of the classes it defines.
SUBMISSION_MODULE = "submission"

# Special methods a submission may define. Each is harmless to the grader, which accepts only a
# plain torch.Tensor or ndarray as output and compares it in its own process.
DEFINABLE_DUNDERS = frozenset(
    {
        "__init__",  # every constructor
        "__repr__",  # changes only how the submission's own objects print
        "__len__",  # with the two below: container modules of one's own, like a ModuleList
        "__getitem__",
        "__iter__",
    }
)
# Any other is refused: __eq__, __ne__, __hash__, __bool__ (objects that lie in comparisons),
# __getattr__, __getattribute__, __setattr__ (objects that lie about their contents),
# __torch_function__, __torch_dispatch__ (tensors that rewrite torch's own calls), __del__ (code
# that runs at a moment of its choosing), __init_subclass__, __class_getitem__, __set_name__...

# The one double-underscore attribute a submission may read: `super().__init__()`.
READABLE_DUNDERS = frozenset({"__init__"})

# Double-underscore names a submission may bind: module metadata that nothing reads but tools.
BINDABLE_DUNDERS = frozenset({"__all__", "__version__", "__author__"})

# What RestrictedPython's print support binds in each function that prints.
_PRINT_COLLECTOR = "_print"


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def is_private(name: str) -> bool:
    """`_cache`, `_split_heads`, `_Net__heads`: a leading underscore, and not a special name.
    (As a variable, `_` alone is a throwaway: `name_problem` lets it through.)"""
    return name.startswith("_") and not is_dunder(name)


def _is_guard_name(name: str) -> bool:
    return (len(name) > 2 and name.startswith("_") and name.endswith("_")) or name == (
        _PRINT_COLLECTOR
    )


def name_problem(name: str, *, defining: bool) -> str | None:
    """Why the submission may not bind or use `name` (a variable, argument, function or class).

    `defining`: `name` is that of a `def`, which may be one of the definable special methods.
    """
    if is_dunder(name):
        if name in BINDABLE_DUNDERS or (defining and name in DEFINABLE_DUNDERS):
            return None
        if defining:
            return (
                f"defining `{name}` is not allowed: besides "
                f"{', '.join(f'`{allowed}`' for allowed in sorted(DEFINABLE_DUNDERS))}, special "
                "methods change how Python and torch treat your objects (comparison, hashing, "
                "attribute lookup, dispatch), which could fool the grader"
            )
        return f"`{name}` is not allowed: double-underscore names reach into Python's internals"
    if _is_guard_name(name):
        return (
            f"`{name}` is reserved for the grading sandbox (names that both start and end with "
            "`_` are its guards); choose another"
        )
    if name in FORBIDDEN_FUNC_NAMES:
        return f"`{name}` is a reserved name in the grading sandbox; choose another"
    return None


def attribute_problem(name: str, *, storing: bool) -> str | None:
    """Why the submission may not read (or write) the attribute `name`, whatever the object.

    Private names are not judged here: whether they are the submission's own depends on the
    object, which only the runtime guards see.
    """
    if name in READABLE_DUNDERS and not storing:
        return None
    if name in INSPECT_ATTRIBUTES:
        return (
            f"`{name}` is not allowed: frames, tracebacks and code objects would let code look "
            "into the grader"
        )
    if is_dunder(name):
        return (
            f"`{name}` is not allowed: double-underscore attributes reach into Python's internals "
            "(only `__init__` may be read, as in `super().__init__()`)"
        )
    return None


def private_refusal(written: str) -> str:
    """The refusal of a private attribute on an object the submission does not own."""
    return (
        f"`{written}` is not allowed: attributes that start with `_` are private to the library "
        "that defines them; only the classes and objects your code defines may use such names "
        "of their own"
    )


def forbidden_message(written: str) -> str:
    return f"`{written}` is not allowed in this exercise: the point is to build it yourself"


def import_refusal(module: str, allowed: Iterable[str]) -> str:
    return autograd.refusal(module) or (
        f"importing `{module}` is not allowed in this exercise; you may import: "
        f"{', '.join(sorted(allowed)) or 'nothing'}"
    )
