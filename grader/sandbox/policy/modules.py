"""What a submission may import, and what it may read from each module it imports.

Imports: the exercise's `allowed_imports` name libraries (`torch`, `numpy`); allowing one allows
its computational submodules too (`torch.nn.functional`, `torch.nn.init`, `numpy.linalg`...,
`torch.autograd` for backward passes of one's own, see `autograd`, and gradient clipping; an
exercise lists `torch.optim` for optimizers, see `training`), and every exercise
allows the modules that annotations and plain arithmetic use (`typing`, `torchtyping`,
`__future__`, `math`) and `collections`' containers. A leftover `import numpy as np` in a torch
exercise is allowed where the exercise lists numpy. An exercise narrows what is allowed with
`forbidden`.

Attributes of a module are read by allow-list, never deny-list: `import torch` hands out
`torch.os`, `torch.load`, `torch.library`..., so only what a rule below lists can be read.
"""

from __future__ import annotations
import __future__

import functools
import importlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import torch

from grader.sandbox.policy import autograd, training

# Importable whatever the exercise: annotations (`from __future__ import annotations` is a
# compiler directive; torchtyping is a stand-in whose `TensorType[...]` is torch.Tensor), the
# math module and the containers students build layers with (`nn.Sequential(OrderedDict(...))`),
# none of which reaches a file, a process or another module.
ALWAYS_IMPORTABLE = frozenset({"__future__", "typing", "torchtyping", "math", "collections"})

# Submodules that come with a library the exercise allows: math, layers, initialisers and
# gradient clipping; not torch.optim, which an exercise lists where it needs it (`training`).
_SUBMODULES: Mapping[str, tuple[str, ...]] = {
    "torch": (
        "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.fft",
        "torch.special", "torch.autograd", "torch.autograd.function", "torch.nn.utils",
    ),
    "torch.nn": ("torch.nn.functional", "torch.nn.init", "torch.nn.utils"),
    "numpy": ("numpy.linalg",),
}  # fmt: skip


def importable_modules(allowed_imports: Iterable[str]) -> frozenset[str]:
    """Every module a submission may import, given an exercise's `allowed_imports`."""
    allowed = set(allowed_imports) | ALWAYS_IMPORTABLE
    for name in list(allowed):
        allowed.update(_SUBMODULES.get(name, ()))
    return frozenset(allowed)


_Rule = Callable[[types.ModuleType], frozenset[str]]


def _public(module: types.ModuleType) -> Iterator[tuple[str, object]]:
    # vars() rather than dir() and getattr(): listing a module must not run its lazy imports.
    return ((name, value) for name, value in vars(module).items() if not name.startswith("_"))


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


# What a function of a math module is, judged by its type: a callable instance may set its own
# `__module__` (numpy.linalg.test is a PytestTester that claims to be "numpy.linalg").
_FUNCTION_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    np.ufunc,
    type(np.concatenate),  # numpy's array-function dispatcher
)


def _is_function_of(value: object, homes: tuple[str, ...]) -> bool:
    return isinstance(value, _FUNCTION_TYPES) and getattr(value, "__module__", None) in homes


def _functions_from(*homes: str) -> _Rule:
    """For modules of pure math: their public functions implemented in `homes`, and constants."""

    def rule(module: types.ModuleType) -> frozenset[str]:
        return frozenset(
            name
            for name, value in _public(module)
            if _is_number(value) or _is_function_of(value, homes)
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
        # Their layouts, which `torch.zeros(..., layout=...)` would take instead.
        "sparse_coo",
        "sparse_csr",
        "sparse_csc",
        "sparse_bsr",
        "sparse_bsc",
        # With unsafe=True it skips the checks of its lengths, reading and writing outside its
        # tensors; refused outright, since `from torch import segment_reduce` binds it past any
        # check of its arguments.
        "segment_reduce",
    }
)
# What torch code uses beyond its native operators, dtypes and constants.
_TORCH_BY_NAME = frozenset(
    {
        "Tensor", "Size", "dtype", "device", "Generator", "finfo", "iinfo",
        "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_grad_enabled",
        "is_tensor", "manual_seed", "seed", "initial_seed", "get_default_dtype",
        "set_printoptions",
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
        # the dtype of arrays of Python object pointers (see `unsafe.OBJECT_ARRAYS`)
        "object_",
        # constructors that read raw bytes as records, whose object fields would be pointers
        # of the caller's choosing (`np.ndarray` itself is handed out checked, see
        # `unsafe.array_class`)
        "recarray", "record", "void",
        # process-wide error handling, the installation, the test runner
        "setbufsize", "seterr", "seterrcall", "show_config", "show_runtime",
        "get_include", "info", "test",
    }
)  # fmt: skip
_NUMPY_BY_NAME = frozenset({"newaxis", "s_", "r_", "c_", "index_exp", "mgrid", "ogrid"})


def _numpy_attributes(module: types.ModuleType) -> frozenset[str]:
    # numpy marks its public functions, ufuncs and classes with `__module__ == "numpy"`.
    api = {
        name
        for name, value in _public(module)
        if _is_number(value)
        or _is_function_of(value, ("numpy",))
        or (isinstance(value, type) and value.__module__ == "numpy")
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
    "torch.optim": training.optimizers,
    "torch.nn.utils": _exactly(*training.NN_UTILS_NAMES),
    "torch.autograd": _exactly(*autograd.ALLOWED_ATTRIBUTES["torch.autograd"]),
    "torch.autograd.function": _exactly(*autograd.ALLOWED_ATTRIBUTES["torch.autograd.function"]),
    "numpy": _numpy_attributes,
    "numpy.linalg": _functions_from("numpy.linalg"),
    "math": _functions_from("math"),
    "collections": _exactly("OrderedDict", "defaultdict", "Counter", "deque"),
    "typing": _exactly(*_TYPING_NAMES),
    "torchtyping": _exactly("TensorType", "patch_typeguard"),
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


def _patch_typeguard() -> None:
    """torchtyping's `patch_typeguard()`: with no typeguard to patch, nothing to do."""


def stand_ins() -> dict[str, types.ModuleType]:
    """Modules that notebooks import for annotations only, provided without their machinery
    (torchtyping would patch typeguard, and is not installed in the sandbox)."""
    torchtyping = types.ModuleType("torchtyping", "A stand-in for annotations.")
    vars(torchtyping).update(TensorType=_TensorType, patch_typeguard=_patch_typeguard)
    return {"torchtyping": torchtyping}


@dataclass(frozen=True)
class AllowedModule:
    name: str
    module: types.ModuleType  # held so that its id stays its own
    attributes: frozenset[str]


def allowed_modules(
    names: Iterable[str], stand_ins: Mapping[str, types.ModuleType]
) -> dict[int, AllowedModule]:
    """The allowed modules by identity: a module reached any way is recognised as itself."""
    allowed = {}
    for name in names:
        module = stand_ins.get(name) or _import_if_installed(name)
        if module is not None:
            allowed[id(module)] = AllowedModule(name, module, _allowed_attributes(name, module))
    return allowed


def import_importable(allowed_imports: Iterable[str]) -> None:
    """Import every module a submission may import, and what they import when first used,
    ahead of a confinement that will let no file be opened to import one."""
    for name in sorted(importable_modules(allowed_imports) - stand_ins().keys()):
        for module in (name, *training.IMPORTED_ON_FIRST_USE.get(name, ())):
            _import_if_installed(module)


def _import_if_installed(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None  # the submission's own import then fails with the usual ModuleNotFoundError


def resolve_forbidden(dotted_names: Iterable[str]) -> dict[int, str]:
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
