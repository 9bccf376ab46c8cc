"""The runtime guards: what the rewritten code of a submission calls for every attribute it
reads, item it reads, write, import, class statement and print.

`Guards` is bound to one run's policy; `namespace.restricted_globals` hands its methods to the
submission. A refusal goes to `on_violation`, which ends the run: it never returns, so a bare
`except:` in the submission cannot swallow it and keep probing.
"""

from __future__ import annotations

import builtins
import importlib
import operator
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import numpy as np
import torch

from grader.contract import Policy, Violation
from grader.sandbox.policy.formatter import FORMAT_METHODS, GuardedFormatter
from grader.sandbox.policy.modules import (
    allowed_modules,
    importable_modules,
    resolve_forbidden,
    stand_ins,
)
from grader.sandbox.policy.names import (
    attribute_problem,
    forbidden_message,
    import_refusal,
    is_private,
    private_refusal,
)
from grader.sandbox.policy.output import Printer, StdoutCapture
from grader.sandbox.policy.ownership import Ownership
from grader.sandbox.policy.refusals import module_name, quotable, submission_line, write_refusal
from grader.sandbox.policy.unsafe import (
    OBJECT_ARRAYS,
    attribute_refusal,
    checked_call,
    is_object_array,
)

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


class Guards:
    """The runtime checks that restricted code calls, bound to one run's policy."""

    def __init__(
        self,
        policy: Policy,
        stdout: StdoutCapture,
        on_violation: Callable[[Violation], NoReturn],
        private_names: frozenset[str],
    ) -> None:
        self._on_violation = on_violation
        self._printer = Printer(stdout)
        self._formatter = GuardedFormatter(self)
        self._allowed_imports = importable_modules(policy.allowed_imports)
        self._stand_ins = stand_ins()
        self._modules = allowed_modules(self._allowed_imports, self._stand_ins)
        self._forbidden = resolve_forbidden(policy.forbidden)
        self._ownership = Ownership(private_names)

    def refuse(self, message: str) -> NoReturn:
        self._on_violation(Violation(message, submission_line()))

    def attribute(self, obj: object, name: str) -> Any:
        """`_getattr_`: every `obj.name` the submission reads."""
        self._check_name(obj, name, storing=False)
        if isinstance(obj, types.ModuleType):
            return self._module_attribute(obj, name)
        self._check_object_attribute(obj, name)
        if name in FORMAT_METHODS and isinstance(obj, str):
            return self._formatter.method(obj, name)
        value = getattr(obj, name)
        self._check_value(value, f"`.{name}`")
        return checked_call(obj, name, value, self.refuse)

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

    def setattr_builtin(self, obj: object, name: str, value: object) -> None:
        """`setattr`, through the same checks as `obj.name = value`; a private name it sets on
        the submission's own object is the submission's from then on."""
        if type(name) is str and is_private(name):
            self._ownership.claim(obj, name)
        self._check_name(obj, name, storing=True)
        setattr(self.write(obj, name), name, value)

    def delattr_builtin(self, obj: object, name: str) -> None:
        """`delattr`, through the same checks as `del obj.name`."""
        self._check_name(obj, name, storing=True)
        delattr(self.write(obj, name), name)

    def item(self, obj: Any, key: object) -> Any:
        """`_getitem_`: every `obj[key]` the submission reads."""
        if is_object_array(obj):
            self.refuse(OBJECT_ARRAYS)
        value = obj[key]
        self._check_value(value, "an item")
        return value

    def write(self, obj: object, name: str | None = None) -> object:
        """`_write_`: the object of every `obj.name = ...`, `obj[key] = ...` and `del`; `name`
        is the attribute's, for attributes."""
        # Classes first, torch.Tensor and nn.Module among them: no monkeypatching.
        if isinstance(obj, type):
            self.refuse(write_refusal(obj))
        if is_object_array(obj):
            self.refuse(OBJECT_ARRAYS)
        if name is not None and is_private(name):
            if not self._ownership.owns_private(obj, name):
                self.refuse(private_refusal(f".{quotable(obj, name)}"))
            self._ownership.record_write(obj, name)
        if isinstance(
            obj, list | dict | torch.Tensor | np.ndarray | torch.nn.Module
        ) or self._ownership.owns_instance(obj):
            return obj
        self.refuse(write_refusal(obj))

    def inplace_attribute(self, obj: object, name: str, symbol: str, value: object) -> None:
        """`obj.name op= value`."""
        target = self.write(obj, name)
        setattr(target, name, inplace(symbol, self.attribute(obj, name), value))

    def inplace_item(self, obj: Any, key: object, symbol: str, value: object) -> None:
        """`obj[key] op= value`."""
        target: Any = self.write(obj)
        target[key] = inplace(symbol, self.item(obj, key), value)

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
            self.refuse(import_refusal(name, self._allowed_imports))
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
        for internal in self._ownership.shadowed_internals(cls):
            self.refuse(private_refusal(internal))
        self._ownership.adopt(cls)
        return cls

    def printer(self, _getattr: object) -> Printer:
        """`_print_`, which RestrictedPython calls once in each function that prints."""
        return self._printer

    def _check_name(self, obj: object, name: str, *, storing: bool) -> None:
        """Refuse `obj.name` for its name: special, a frame's, or private to a library."""
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
        problem = attribute_problem(name, storing=storing)
        if problem is not None:
            self.refuse(problem.replace(f"`{name}`", f"`{quotable(obj, name)}`", 1))
        if is_private(name) and not self._ownership.owns_private(obj, name):
            written = quotable(obj, name)
            if isinstance(obj, types.ModuleType):
                written = f"{module_name(obj)}.{written}"
            self.refuse(private_refusal(written))

    def _module_attribute(self, module: types.ModuleType, name: str) -> Any:
        allowed = self._modules.get(id(module))
        if allowed is None:
            self.refuse(f"the module `{module_name(module)}` is not available in this exercise")
        dotted = f"{allowed.name}.{name}"
        # Nothing outside the allow-list is even looked up: a module's lazy __getattr__ may import.
        if name not in allowed.attributes and dotted not in self._allowed_imports:
            if dotted in sys.modules:
                self.refuse(f"`{dotted}` is a module this exercise does not let you use")
            self.refuse(
                f"`{allowed.name}.{quotable(module, name)}` is not available in the grading "
                f"sandbox: only the computational part of `{allowed.name}` is"
            )
        value = getattr(module, name)
        self._check_value(value, f"`{dotted}`")
        return value

    def _check_object_attribute(self, obj: object, name: str) -> None:
        reason = attribute_refusal(obj, name)
        if reason is not None:
            self.refuse(reason)

    def _check_value(self, value: object, reached_as: str) -> None:
        dotted = self._forbidden.get(id(value))
        if dotted is not None:
            self.refuse(forbidden_message(dotted))
        if is_object_array(value):
            self.refuse(OBJECT_ARRAYS)
        if isinstance(value, types.ModuleType) and id(value) not in self._modules:
            self.refuse(
                f"{reached_as} is the module `{module_name(value)}`, which this exercise does not "
                "let you use"
            )


def inplace(symbol: str, target: Any, value: Any) -> Any:
    """`target op= value` for `_inplacevar_` and the item and attribute forms."""
    return _INPLACE_OPERATORS[symbol](target, value)
