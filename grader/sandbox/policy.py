"""The first layer of the sandbox: a RestrictedPython policy and the guards its code calls.

Static: `compile_submission` parses the source and rewrites it with a RestrictedPython policy
that is widened for ordinary nn.Module code (`super().__init__()`, nested classes, annotations,
augmented assignment of attributes and items) and narrowed for one exercise (an exact import
allow-list, forbidden APIs). Every problem comes back at once, each with its line.

Runtime: the rewritten code reads attributes through `_getattr_`, items through `_getitem_`,
writes through `_write_`, imports through `__import__` and prints through `_print_`;
`restricted_globals` builds those guards. Modules are guarded by allow-list, not deny-list:
`import torch` hands out `torch.os`, `torch.load`, `torch.library`..., so only what is listed, by
rule and by name, can be read from a module. A refusal goes to `on_violation`, which ends the run:
it never returns, so a bare `except:` in the submission cannot swallow it.

This layer is assumed to fail on its own: the process layer (a fresh hardened child with nothing
secret in reach) contains whatever slips through.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import functools
import importlib
import operator
import re
import string
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import torch
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import (
    FORBIDDEN_FUNC_NAMES,
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

from grader.sandbox.calls import SUBMISSION_FILENAME
from grader.sandbox.job import Policy, Violation

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

# Importable whatever the exercise: `from __future__ import annotations` is a compiler directive,
# and its features are all that may be taken from it.
_ALWAYS_IMPORTABLE = frozenset({"__future__"})

# The one double-underscore attribute a submission may read: `super().__init__()`.
READABLE_DUNDERS = frozenset({"__init__"})

# Attributes refused on any object that is not a module, for what their value lets code do.
_UNSAFE_ATTRIBUTES: Mapping[str, str] = {
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
# On tensors and modules only (other objects may well have a `type` of their own).
_UNSAFE_TORCH_TYPE = "imports any module a string names; use `.to(dtype)` instead"
_FORMAT_METHODS = frozenset({"format", "format_map"})

# Builtins that ordinary nn.Module code uses; none reaches files, the interpreter or another
# object's internals. map, filter, zip, sorted, reversed iterate in C, past `_getiter_`:
# RestrictedPython leaves them out for that, but `_getiter_` decides nothing in this sandbox.
# Left out on purpose: open, input, breakpoint, help (I/O); eval, exec, compile (new unchecked
# code); globals, locals, vars, dir (namespaces); type (with 3 arguments it makes a class with any
# special method, with 1 it hands out `type` itself); setattr, delattr (writes past `_write_`);
# memoryview, bytearray (raw buffers); hash (hashing a deeply nested tuple crashes CPython).
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

_INPLACE_OPERATORS: Mapping[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "|=": operator.ior,
    "^=": operator.ixor,
    "&=": operator.iand,
    "//=": operator.ifloordiv,
    "@=": operator.imatmul,
}


class SubmissionRejected(Exception):
    """The static layer refused the source: nothing of it ran."""

    def __init__(self, violations: Iterable[Violation]) -> None:
        self.violations = tuple(
            sorted(violations, key=lambda found: (found.line is None, found.line or 0))
        )
        super().__init__(
            "; ".join(f"line {found.line}: {found.message}" for found in self.violations)
        )


# --- the static layer ---------------------------------------------------------------------------


def compile_submission(source: str, policy: Policy) -> types.CodeType:
    """Check `source` against the policy and compile it, rewritten to call the runtime guards.

    Raises SubmissionRejected listing every problem found, each with its line.
    """
    try:
        tree = ast.parse(source, SUBMISSION_FILENAME)
        checker = _SubmissionPolicy(policy)
        checker.visit(tree)
        if checker.violations:
            raise SubmissionRejected(checker.violations)
        # dont_inherit: this module's `from __future__ import annotations` is not the submission's.
        return compile(tree, SUBMISSION_FILENAME, "exec", dont_inherit=True)
    except SyntaxError as error:
        raise SubmissionRejected([Violation(f"syntax error: {error.msg}", error.lineno)]) from None
    except (RecursionError, MemoryError):  # what CPython's parser and compiler raise past a depth
        raise SubmissionRejected(
            [Violation("the code is nested too deeply (or one expression is too long) to check")]
        ) from None
    except ValueError as error:  # a NUL character, for one
        raise SubmissionRejected([Violation(f"the source cannot be read: {error}")]) from None


_Visited = ast.AST | Iterable[ast.AST] | None


class _SubmissionPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy, widened for nn.Module code and narrowed for one exercise."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.violations: list[Violation] = []
        self._allowed_imports = frozenset(policy.allowed_imports)
        self._forbidden = {dotted.rpartition(".")[2]: dotted for dotted in policy.forbidden}

    def error(self, node: ast.AST, info: str) -> None:
        self.violations.append(Violation(info, getattr(node, "lineno", None)))

    def check_name(
        self, node: ast.AST, name: str | None, allow_magic_methods: bool = False
    ) -> None:
        # allow_magic_methods: RestrictedPython sets it for the name of a `def`.
        problem = None if name is None else _name_problem(name, defining=allow_magic_methods)
        if problem is not None:
            self.error(node, problem)

    def visit_Name(self, node: ast.Name) -> _Visited:  # noqa: N802 (ast's naming)
        if node.id == "__name__" and isinstance(node.ctx, ast.Load):
            return node  # the string "submission": lets `if __name__ == "__main__":` skip demos
        if node.id == "printed":  # RestrictedPython would turn it into its print collector
            self.error(node, "`printed` is a reserved name in the grading sandbox; choose another")
            return node
        return super().visit_Name(node)

    def visit_Attribute(self, node: ast.Attribute) -> _Visited:  # noqa: N802 (ast's naming)
        self._check_attribute(node, storing=not isinstance(node.ctx, ast.Load))
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            return _guard_call("_getattr_", node, node.value, ast.Constant(node.attr))
        node.value = _guard_call("_write_", node.value, node.value)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> _Visited:  # noqa: N802 (ast's naming)
        """`x += 1` as RestrictedPython does it; `a.b += 1` and `a[k] += 1`, which it refuses,
        through guards that check the write and the read as `a.b = a.b + 1` would."""
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        symbol = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        owner, value = self.visit(target.value), self.visit(node.value)
        key: ast.expr
        if isinstance(target, ast.Attribute):
            self._check_attribute(target, storing=True)
            key, guard = ast.Constant(target.attr), "_inplace_attribute_"
        else:
            # `_key_[...]` evaluates the subscript's key, slices and all, as Python would.
            key = ast.Subscript(ast.Name("_key_", ast.Load()), self.visit(target.slice), ast.Load())
            guard = "_inplace_item_"
        statement = ast.Expr(_guard_call(guard, node, owner, key, symbol, value))
        copy_locations(statement, node)
        return statement

    def visit_AnnAssign(self, node: ast.AnnAssign) -> _Visited:  # noqa: N802 (ast's naming)
        # RestrictedPython has no rule for `x: int = 0` and refuses it; its parts are guarded as
        # anywhere else.
        return self.node_contents_visit(node)

    def visit_Import(self, node: ast.Import) -> _Visited:  # noqa: N802 (ast's naming)
        for alias in node.names:
            self._check_import(node, alias.name)
            top = alias.name.partition(".")[0]
            if alias.asname is None and top != alias.name and top not in self._allowed_imports:
                self.error(
                    node,
                    f"`import {alias.name}` also binds `{top}`, which this exercise does not let "
                    f"you import; write `import {alias.name} as ...`",
                )
        return super().visit_Import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> _Visited:  # noqa: N802 (ast's naming)
        if node.level or node.module is None:
            self.error(node, "relative imports are not allowed: a submission is a single file")
        else:
            self._check_import(node, node.module)
            for alias in node.names:
                if alias.name in self._forbidden:
                    self.error(node, _forbidden_message(f"{node.module}.{alias.name}"))
        return super().visit_ImportFrom(node)

    def _check_attribute(self, node: ast.Attribute, *, storing: bool) -> None:
        problem = _attribute_problem(node.attr, storing=storing)
        if problem is not None:
            self.error(node, problem)
        elif node.attr in self._forbidden:
            self.error(node, _forbidden_message(_shorten(ast.unparse(node))))

    def _check_import(self, node: ast.stmt, module: str) -> None:
        if module not in self._allowed_imports and module not in _ALWAYS_IMPORTABLE:
            self.error(node, _import_refusal(module, self._allowed_imports))


def _guard_call(guard: str, located_like: ast.expr | ast.stmt, *args: ast.expr) -> ast.Call:
    call = ast.Call(ast.Name(guard, ast.Load()), list(args), [])
    copy_locations(call, located_like)
    return call


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _name_problem(name: str, *, defining: bool) -> str | None:
    """Why the submission may not bind or use `name` (a variable, argument, function or class)."""
    if _is_dunder(name):
        if defining and name in DEFINABLE_DUNDERS:
            return None
        if defining:
            return (
                f"defining `{name}` is not allowed: besides "
                f"{', '.join(f'`{allowed}`' for allowed in sorted(DEFINABLE_DUNDERS))}, special "
                "methods change how Python and torch treat your objects (comparison, hashing, "
                "attribute lookup, dispatch), which could fool the grader"
            )
        return f"`{name}` is not allowed: double-underscore names reach into Python's internals"
    if name.startswith("_") and name != "_":
        return f"`{name}`: names that start with `_` are reserved for the grading sandbox"
    if name in FORBIDDEN_FUNC_NAMES:
        return f"`{name}` is a reserved name in the grading sandbox; choose another"
    return None


def _attribute_problem(name: str, *, storing: bool) -> str | None:
    """Why the submission may not read (or write) the attribute `name` of any object."""
    if name in READABLE_DUNDERS and not storing:
        return None
    if name in INSPECT_ATTRIBUTES:
        return (
            f"`{name}` is not allowed: frames, tracebacks and code objects would let code look "
            "into the grader"
        )
    if _is_dunder(name):
        return (
            f"`{name}` is not allowed: double-underscore attributes reach into Python's internals "
            "(only `__init__` may be read, as in `super().__init__()`)"
        )
    if name.startswith("_"):
        return (
            f"`{name}` is not allowed: attributes that start with `_` are private to libraries "
            "and to the grading sandbox (name your own without the leading `_`)"
        )
    return None


def _forbidden_message(written: str) -> str:
    return f"`{written}` is not allowed in this exercise: the point is to build it yourself"


def _import_refusal(module: str, allowed: Iterable[str]) -> str:
    return (
        f"importing `{module}` is not allowed in this exercise; you may import: "
        f"{', '.join(sorted(allowed)) or 'nothing'}"
    )


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- what print() writes to ---------------------------------------------------------------------


class StdoutCapture:
    """What restricted code prints, kept up to `limit_chars` between two takes.

    Text past the limit is dropped as it arrives: a print loop must not fill the memory.
    """

    def __init__(self, limit_chars: int) -> None:
        self._limit = limit_chars
        self._parts: list[str] = []
        self._kept = 0
        self._cut = False

    def write(self, text: str) -> None:
        room = self._limit - self._kept
        if len(text) > room:
            text, self._cut = text[:room], True
        if text:
            self._parts.append(text)
            self._kept += len(text)

    def take(self) -> str:
        """What was printed since the last take, cut at the limit with a note; then forget it."""
        text = "".join(self._parts)
        if self._cut:
            text += f"… (output cut at {self._limit} characters)"
        self._parts, self._kept, self._cut = [], 0, False
        return text


class _Printer:
    """What `print` is in restricted code: RestrictedPython turns `print(...)` into
    `_print._call_print(...)` on the object that `_print_` returns."""

    def __init__(self, stdout: StdoutCapture) -> None:
        self._stdout = stdout

    def _call_print(
        self, *objects: object, sep: str | None = " ", end: str | None = "\n", flush: bool = False
    ) -> None:
        # `flush` is accepted for code written for a terminal; the capture has nothing to flush.
        # There is no `file`: nothing in the sandbox is worth printing to but the report.
        print(*objects, sep=sep, end=end, file=self._stdout)


# --- what may be read from a module -------------------------------------------------------------

_Rule = Callable[[types.ModuleType], frozenset[str]]


def _public(module: types.ModuleType) -> Iterator[tuple[str, object]]:
    # vars() rather than dir() and getattr(): listing a module must not run its lazy imports.
    return ((name, value) for name, value in vars(module).items() if not name.startswith("_"))


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def _functions_from(*homes: str) -> _Rule:
    """For modules of pure math: their public functions implemented in `homes`, and constants."""

    def rule(module: types.ModuleType) -> frozenset[str]:
        return frozenset(
            name
            for name, value in _public(module)
            if _is_number(value)
            or (
                callable(value)
                and not isinstance(value, type)
                and getattr(value, "__module__", None) in homes
            )
        )

    return rule


def _exactly(*names: str) -> _Rule:
    return lambda module: frozenset(names)


# torch's native operators are tensor math, except these.
_TORCH_REFUSED = frozenset(
    {
        "from_file",  # reads files, and with shared=True writes them
        "frombuffer",  # a writable tensor over an immutable Python object's memory
        "asarray",  # the same, given bytes
        # Sparse constructors take indices unchecked by default: densifying a tensor built
        # with out-of-range indices writes outside its buffer, corrupting the heap.
        "sparse_coo_tensor",
        "sparse_csr_tensor",
        "sparse_csc_tensor",
        "sparse_bsr_tensor",
        "sparse_bsc_tensor",
        "sparse_compressed_tensor",
    }
)
# What torch code uses beyond its native operators, dtypes and constants.
_TORCH_BY_NAME = frozenset(
    {
        "Tensor", "Size", "dtype", "device", "Generator", "finfo", "iinfo",
        "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_grad_enabled",
        "is_tensor", "manual_seed", "seed", "initial_seed", "get_default_dtype",
        "broadcast_shapes", "unique", "unravel_index",
        "FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor",
    }
)  # fmt: skip


def _torch_attributes(module: types.ModuleType) -> frozenset[str]:
    native_operators = {name for name in dir(torch._C._VariableFunctions) if name[0] != "_"}
    constants = {
        name
        for name, value in _public(module)
        if _is_number(value) or isinstance(value, torch.dtype | torch.layout | torch.memory_format)
    }
    present = native_operators & vars(module).keys()
    return frozenset(present | constants | _TORCH_BY_NAME) - _TORCH_REFUSED


def _nn_attributes(module: types.ModuleType) -> frozenset[str]:
    layers = {
        name
        for name, value in _public(module)
        if isinstance(value, type) and issubclass(value, torch.nn.Module)
    }
    # DataParallel starts threads across devices; SyncBatchNorm talks to other processes.
    return frozenset((layers - {"DataParallel", "SyncBatchNorm"}) | {"Parameter", "Buffer"})


_NUMPY_REFUSED = frozenset(
    {
        # files
        "load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt",
        "fromfile", "fromregex", "memmap",
        # an array over an immutable Python object's memory, which torch.from_numpy makes writable
        "frombuffer",
        # process-wide settings, the installation, the test runner
        "set_printoptions", "setbufsize", "seterr", "seterrcall", "show_config", "show_runtime",
        "get_include", "info", "test",
    }
)  # fmt: skip
_NUMPY_BY_NAME = frozenset({"newaxis", "s_", "r_", "c_", "index_exp", "mgrid", "ogrid"})


def _numpy_attributes(module: types.ModuleType) -> frozenset[str]:
    # numpy marks its public functions, ufuncs and classes with `__module__ == "numpy"`.
    api = {
        name
        for name, value in _public(module)
        if _is_number(value) or (callable(value) and getattr(value, "__module__", None) == "numpy")
    }
    return frozenset((api - _NUMPY_REFUSED) | _NUMPY_BY_NAME)


# By name: typing also has get_type_hints, which runs string annotations through plain eval.
_TYPING_NAMES = (
    "Any", "Callable", "Dict", "Iterable", "Iterator", "List", "Literal", "Mapping", "Optional",
    "Sequence", "Set", "Tuple", "Union", "TYPE_CHECKING", "cast",
)  # fmt: skip

_ATTRIBUTE_RULES: Mapping[str, _Rule] = {
    "torch": _torch_attributes,
    "torch.nn": _nn_attributes,
    "torch.nn.functional": _functions_from("torch.nn.functional", "torch._C._nn", "torch"),
    "torch.nn.init": _functions_from("torch.nn.init"),
    "torch.linalg": _functions_from("torch._C._linalg"),
    "torch.fft": _functions_from("torch._C._fft"),
    "torch.special": _functions_from("torch._C._special"),
    "numpy": _numpy_attributes,
    "numpy.linalg": _functions_from("numpy.linalg"),
    "math": _functions_from("math"),
    "typing": _exactly(*_TYPING_NAMES),
    "torchtyping": _exactly("TensorType"),
    "__future__": _exactly(*__future__.all_feature_names),
}


@functools.cache
def _allowed_attributes(name: str, module: types.ModuleType) -> frozenset[str]:
    """What the submission may read from an allowed module; nothing from a module with no rule."""
    rule = _ATTRIBUTE_RULES.get(name)
    return frozenset() if rule is None else rule(module)


class _TensorType:
    """torchtyping's `TensorType` as annotations use it: `TensorType[...]` is torch.Tensor."""

    def __class_getitem__(cls, _dimensions: object) -> type[torch.Tensor]:
        return torch.Tensor


def _stand_ins() -> dict[str, types.ModuleType]:
    """Modules that notebooks import for annotations only, provided without their machinery
    (torchtyping would patch typeguard, and is not installed in the sandbox)."""
    torchtyping = types.ModuleType("torchtyping", "A stand-in for annotations.")
    vars(torchtyping)["TensorType"] = _TensorType
    return {"torchtyping": torchtyping}


@dataclass(frozen=True)
class _AllowedModule:
    name: str
    module: types.ModuleType  # held so that its id stays its own
    attributes: frozenset[str]


def _allowed_modules(
    names: Iterable[str], stand_ins: Mapping[str, types.ModuleType]
) -> dict[int, _AllowedModule]:
    """The allowed modules by identity: a module reached any way is recognised as itself."""
    allowed = {}
    for name in names:
        module = stand_ins.get(name) or _import_if_installed(name)
        if module is not None:
            allowed[id(module)] = _AllowedModule(name, module, _allowed_attributes(name, module))
    return allowed


def _import_if_installed(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None  # the submission's own import then fails with the usual ModuleNotFoundError


def _resolve_forbidden(dotted_names: Iterable[str]) -> dict[int, str]:
    """The forbidden objects by identity, so that an alias or a computed name is caught too."""
    resolved = {}
    for dotted in dotted_names:
        value = _resolve(dotted)
        if value is not None:
            resolved[id(value)] = dotted
    return resolved


def _resolve(dotted: str) -> object | None:
    """The object a dotted name stands for, from modules already imported (a policy must not
    import anything)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            value: object = module
            for part in parts[cut:]:
                value = getattr(value, part, None)
            return value
    return None


# --- the runtime guards -------------------------------------------------------------------------


def restricted_globals(
    policy: Policy, stdout: StdoutCapture, on_violation: Callable[[Violation], NoReturn]
) -> dict[str, Any]:
    """The globals to exec `compile_submission`'s code in: safe builtins and the guards."""
    guards = _Guards(policy, stdout, on_violation)
    safe_builtins = {name: getattr(builtins, name) for name in _SAFE_BUILTIN_NAMES}
    safe_builtins |= {
        "__build_class__": guards.build_class,
        "__import__": guards.import_module,
        "getattr": guards.getattr_builtin,
        "hasattr": guards.hasattr_builtin,
    }
    return {
        "__builtins__": safe_builtins,
        "__name__": SUBMISSION_MODULE,
        "__metaclass__": type,  # RestrictedPython gives every class `metaclass=__metaclass__`
        "_getattr_": guards.attribute,
        "_getitem_": guards.item,
        "_write_": guards.write,
        "_print_": guards.printer,
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_apply_": _apply,
        "_inplacevar_": _inplace,
        "_inplace_attribute_": guards.inplace_attribute,
        "_inplace_item_": guards.inplace_item,
        "_key_": _KeyOf(),
    }


class _Guards:
    """The runtime checks that restricted code calls, bound to one run's policy."""

    def __init__(
        self, policy: Policy, stdout: StdoutCapture, on_violation: Callable[[Violation], NoReturn]
    ) -> None:
        self._on_violation = on_violation
        self._printer = _Printer(stdout)
        self._formatter = _GuardedFormatter(self)
        self._policy_imports = policy.allowed_imports
        self._allowed_imports = frozenset(policy.allowed_imports) | _ALWAYS_IMPORTABLE
        self._stand_ins = _stand_ins()
        self._modules = _allowed_modules(self._allowed_imports, self._stand_ins)
        self._forbidden = _resolve_forbidden(policy.forbidden)
        # Classes the submission defined, by identity: their instances are its own to change.
        self._submission_classes: dict[int, type] = {}

    def refuse(self, message: str) -> NoReturn:
        self._on_violation(Violation(message, _submission_line()))

    def attribute(self, obj: object, name: str) -> Any:
        """`_getattr_`: every `obj.name` the submission reads."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        problem = _attribute_problem(name, storing=False)
        if problem is not None:
            self.refuse(problem.replace(f"`{name}`", f"`{_quotable(obj, name)}`", 1))
        if isinstance(obj, types.ModuleType):
            return self._module_attribute(obj, name)
        self._check_object_attribute(obj, name)
        if name in _FORMAT_METHODS and isinstance(obj, str):
            return self._formatter.method(obj, name)
        value = getattr(obj, name)
        self._check_value(value, f"`.{name}`")
        return value

    def getattr_builtin(self, obj: object, name: str, *default: object) -> Any:
        """`getattr`, through the same guard as `obj.name`."""
        if len(default) > 1:
            raise TypeError(f"getattr expected at most 3 arguments, got {2 + len(default)}")
        try:
            return self.attribute(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise

    def hasattr_builtin(self, obj: object, name: str) -> bool:
        try:
            self.attribute(obj, name)
        except AttributeError:
            return False
        return True

    def item(self, obj: Any, key: object) -> Any:
        """`_getitem_`: every `obj[key]` the submission reads."""
        value = obj[key]
        self._check_value(value, "an item")
        return value

    def write(self, obj: object) -> object:
        """`_write_`: the object of every `obj.name = ...`, `obj[key] = ...` and `del`."""
        # Classes first, torch.Tensor and nn.Module among them: no monkeypatching.
        if isinstance(obj, type):
            self.refuse(_write_refusal(obj))
        if (
            isinstance(obj, list | dict | torch.Tensor | np.ndarray | torch.nn.Module)
            or id(type(obj)) in self._submission_classes
        ):
            return obj
        self.refuse(_write_refusal(obj))

    def inplace_attribute(self, obj: object, name: str, symbol: str, value: object) -> None:
        """`obj.name op= value`."""
        target = self.write(obj)
        setattr(target, name, _inplace(symbol, self.attribute(obj, name), value))

    def inplace_item(self, obj: Any, key: object, symbol: str, value: object) -> None:
        """`obj[key] op= value`."""
        target: Any = self.write(obj)
        target[key] = _inplace(symbol, self.item(obj, key), value)

    def import_module(
        self,
        name: str,
        _globals: object = None,
        _locals: object = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> types.ModuleType:
        """`__import__`: exactly the modules the exercise allows, and from them only what
        `_getattr_` would give."""
        if isinstance(fromlist, list):
            # CPython's C API (PyImport_Import) imports through the running frame's __import__,
            # with a list as fromlist: torch or numpy importing a module for itself, while the
            # submission's frame runs. The module goes to that library code, not to the
            # submission, whose import statements pass None or a tuple.
            return importlib.import_module(name)
        if level != 0 or name not in self._allowed_imports:
            self.refuse(_import_refusal(name, self._policy_imports))
        module = self._stand_ins.get(name) or importlib.import_module(name)
        for item in fromlist or ():
            self.attribute(module, item)
        if fromlist:
            return module
        top = name.partition(".")[0]  # `import a.b` binds `a`; the static layer checked it
        return self._stand_ins.get(top) or sys.modules[top]

    def build_class(self, body: Callable[[], Any], name: str, *bases: Any, **keywords: Any) -> Any:
        """`__build_class__`: the class statement, noting the class as the submission's own."""
        cls = builtins.__build_class__(body, name, *bases, **keywords)
        self._submission_classes[id(cls)] = cls
        return cls

    def printer(self, _getattr: object) -> _Printer:
        """`_print_`, which RestrictedPython calls once in each function that prints."""
        return self._printer

    def _module_attribute(self, module: types.ModuleType, name: str) -> Any:
        allowed = self._modules.get(id(module))
        if allowed is None:
            self.refuse(f"the module `{_module_name(module)}` is not available in this exercise")
        dotted = f"{allowed.name}.{name}"
        # Nothing outside the allow-list is even looked up: a module's lazy __getattr__ may import.
        if name not in allowed.attributes and dotted not in self._allowed_imports:
            if dotted in sys.modules:
                self.refuse(f"`{dotted}` is a module this exercise does not let you use")
            self.refuse(
                f"`{allowed.name}.{_quotable(module, name)}` is not available in the grading "
                f"sandbox: only the computational part of `{allowed.name}` is"
            )
        value = getattr(module, name)
        self._check_value(value, f"`{dotted}`")
        return value

    def _check_object_attribute(self, obj: object, name: str) -> None:
        reason = _UNSAFE_ATTRIBUTES.get(name)
        if name == "type" and _is_torch_object(obj):
            reason = _UNSAFE_TORCH_TYPE
        if name in _FORMAT_METHODS and isinstance(obj, type) and issubclass(obj, str):
            reason = "formats past the sandbox's checks; call it on a string instead"
        if reason is not None:
            self.refuse(f"`.{name}` is not allowed in the grading sandbox: it {reason}")

    def _check_value(self, value: object, reached_as: str) -> None:
        dotted = self._forbidden.get(id(value))
        if dotted is not None:
            self.refuse(_forbidden_message(dotted))
        if isinstance(value, types.ModuleType) and id(value) not in self._modules:
            self.refuse(
                f"{reached_as} is the module `{_module_name(value)}`, which this exercise does not "
                "let you use"
            )


def _is_torch_object(obj: object) -> bool:
    torch_classes = (torch.Tensor, torch.nn.Module)
    return isinstance(obj, torch_classes) or (
        isinstance(obj, type) and issubclass(obj, torch_classes)
    )


def _module_name(module: types.ModuleType) -> str:
    return str(vars(module).get("__name__", "?"))


def _write_refusal(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        what = f"the module `{_module_name(obj)}`"
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


def _submission_line() -> int | None:
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


_COMPUTED_NAME = "<a name computed while running>"


def _quotable(obj: object, name: str) -> str:
    """`name` as a refusal may repeat it: one that the running code of the submission spells
    out, or one that `obj`'s module or class defines; any other name stands in as
    `_COMPUTED_NAME`.

    Why: a refusal's message reaches the report, on every test, visible or hidden. A name built
    at run time (`getattr(torch, str(x.tolist()))` while a hidden test runs) would carry that
    test's inputs out with it. A name from the source, a module or a class carries no more than
    the choice among them. Not the names of an instance: an nn.Module registers submodules and
    buffers under names computed at run time.
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


def _apply(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`f(*args, **kwargs)`, which RestrictedPython routes through `_apply_`."""
    return function(*args, **kwargs)


def _inplace(symbol: str, target: Any, value: Any) -> Any:
    """`target op= value` for `_inplacevar_` and the item and attribute forms."""
    return _INPLACE_OPERATORS[symbol](target, value)


class _KeyOf:
    """`_key_[k]` is `k`: a subscript's key, slices included, as a value."""

    def __getitem__(self, key: object) -> object:
        return key


_FORMAT_FIELD = re.compile(r"(?P<first>[^.\[]*)(?P<rest>(?:\.[^.\[]+|\[[^\]]+\])*)")
_FORMAT_STEP = re.compile(r"\.(?P<attribute>[^.\[]+)|\[(?P<index>[^\]]+)\]")


class _GuardedFormatter(string.Formatter):
    """`str.format`, whose `{0.name}` and `{0[key]}` fields would otherwise read attributes
    and items past the guards."""

    def __init__(self, guards: _Guards) -> None:
        super().__init__()
        self._guards = guards

    def method(self, template: str, name: str) -> Callable[..., str]:
        if name == "format":
            return functools.partial(self.format, template)
        return lambda mapping: self.vformat(template, (), mapping)

    def get_field(
        self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> tuple[Any, str]:
        field = _FORMAT_FIELD.fullmatch(field_name)
        if field is None:
            raise ValueError(f"invalid format field {field_name!r}")
        first = field["first"]
        value = self.get_value(int(first) if first.isdigit() else first, args, kwargs)
        for step in _FORMAT_STEP.finditer(field["rest"]):
            if step["attribute"] is not None:
                value = self._guards.attribute(value, step["attribute"])
            else:
                index = step["index"]
                value = self._guards.item(value, int(index) if index.isdigit() else index)
        return value, first
