"""The runtime guards: what the rewritten code of a submission calls for every attribute it
reads, item it reads, write, import, class statement and print.

`Guards` is bound to one run's policy; `namespace.restricted_globals` hands its methods to the
submission. A refusal goes to `on_violation`, which ends the run: it never returns, so a bare
`except:` in the submission cannot swallow it and keep probing.
"""

from __future__ import annotations

import builtins
import importlib
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import numpy as np
import torch

from grader.contract import Policy, Violation
from grader.sandbox.policy.formatter import FORMAT_METHODS, GuardedFormatter
from grader.sandbox.policy.inplace import inplace
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
from grader.sandbox.policy.refusals import (
    module_name,
    quotable,
    submission_line,
    unavailable_refusal,
    write_refusal,
)
from grader.sandbox.policy.unsafe import (
    HOLDS_NO_OBJECTS,
    ITEMS_HOLD_NO_OBJECTS,
    NUMPY_VALUES,
    OBJECT_ARRAYS,
    RAW_RECORD_CLASSES,
    any_holds_objects,
    array_class,
    attribute_refusal,
    checked_call,
    holds_objects,
    raw_class_refusal,
)


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
        # What `numpy.ndarray` is to the submission (`unsafe.array_class`); the classes that
        # read raw bytes as objects are refused however reached (`np.dtype("V8").type`).
        self._array_class = array_class(self.refuse)
        self._classes = {id(cls): cls for cls in (np.ndarray, *RAW_RECORD_CLASSES)}

    def refuse(self, message: str) -> NoReturn:
        self._on_violation(Violation(message, submission_line()))

    def attribute(self, obj: object, name: str) -> Any:
        """`_getattr_`: every `obj.name` the submission reads."""
        if obj is self._array_class:  # `np.ndarray.resize`: numpy's, judged as numpy's
            obj = np.ndarray
        self._check_name(obj, name, storing=False)
        if isinstance(obj, types.ModuleType):
            return self._module_attribute(obj, name)
        self._check_object_attribute(obj, name)
        if name in FORMAT_METHODS and isinstance(obj, str):
            return self._formatter.method(obj, name)
        value = self._checked_value(getattr(obj, name), f"`.{name}`")
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
        if holds_objects(obj):
            self.refuse(OBJECT_ARRAYS)
        return self._checked_value(obj[key], "an item")

    def result(self, value: Any) -> Any:
        """`_call_result_`: what every call in the submission returns. No array of objects is
        handed out, nor a dtype that would make one (`np.dtype(chr(79))`), nor a tuple or
        list that holds one (`np.frompyfunc(f, 1, 2)(x)`): refused where it is made, before
        anything of the submission can hand it to code that follows its pointers."""
        kind = type(value)
        if kind in HOLDS_NO_OBJECTS:  # most calls: one look
            return value
        if kind is np.ndarray:
            if value.dtype.hasobject:
                self.refuse(OBJECT_ARRAYS)
            return value
        if kind in (tuple, list) and any_holds_objects(value):
            self.refuse(OBJECT_ARRAYS)
        return self._handed_out(value)

    def iterate(self, iterable: Any) -> Iterator[Any]:
        """`_getiter_`: every `for`, comprehension and unpacking. An array of objects is not
        iterated; what an iterator made in C yields (`map`, `zip`, a generator) is checked item
        by item, since no call of the submission's returned it."""
        if holds_objects(iterable):
            self.refuse(OBJECT_ARRAYS)
        if isinstance(iterable, ITEMS_HOLD_NO_OBJECTS):
            return iter(iterable)
        return self._checked_items(iter(iterable))

    def _checked_items(self, items: Iterator[Any]) -> Iterator[Any]:
        for item in items:
            yield self._handed_out(item)

    def write(self, obj: object, name: str | None = None) -> object:
        """`_write_`: the object of every `obj.name = ...`, `obj[key] = ...` and `del`; `name`
        is the attribute's, for attributes."""
        # Classes first, torch.Tensor and nn.Module among them: no monkeypatching.
        if isinstance(obj, type):
            self.refuse(write_refusal(obj))
        if holds_objects(obj):
            self.refuse(OBJECT_ARRAYS)
        private = name if name is not None and is_private(name) else None
        if private is not None and not self._ownership.owns_private(obj, private):
            self.refuse(private_refusal(f".{quotable(obj, private)}"))
        if not isinstance(
            obj, list | dict | torch.Tensor | np.ndarray | torch.nn.Module
        ) and not self._ownership.owns_instance(obj):
            self.refuse(write_refusal(obj))
        # A private attribute is the submission's for as long as it holds what it wrote there:
        # the write goes through a target that notes the value.
        return obj if private is None else self._ownership.write_target(obj)

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
        if fromlist:
            # `from numpy import ndarray` binds, under each name, what the import returns holds
            # there: exactly what `_getattr_` gives (`np.ndarray`'s stand-in included), never
            # the module's own attribute, which Python would read past the guards.
            imported = types.SimpleNamespace()
            for item in fromlist:
                setattr(imported, item, self.attribute(module, item))
            return imported  # type: ignore[return-value]
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
            self.refuse(unavailable_refusal(allowed.name, module, name))
        return self._checked_value(getattr(module, name), f"`{dotted}`")

    def _check_object_attribute(self, obj: object, name: str) -> None:
        reason = attribute_refusal(obj, name)
        if reason is not None:
            self.refuse(reason)

    def _checked_value(self, value: object, reached_as: str) -> Any:
        """`value`, read as an attribute or item, as the submission may have it."""
        dotted = self._forbidden.get(id(value))
        if dotted is not None:
            self.refuse(forbidden_message(dotted))
        if isinstance(value, types.ModuleType) and id(value) not in self._modules:
            self.refuse(
                f"{reached_as} is the module `{module_name(value)}`, which this exercise does not "
                "let you use"
            )
        return self._handed_out(value)

    def _handed_out(self, value: object) -> Any:
        """`value` as the submission may have it, however it came (read, returned, iterated):
        never an array of objects or a class that makes one from raw bytes, and `np.ndarray`
        as its checked stand-in."""
        if type(value) in HOLDS_NO_OBJECTS:
            return value
        if isinstance(value, NUMPY_VALUES):  # `holds_objects`, inlined: most values are arrays
            if (value if isinstance(value, np.dtype) else value.dtype).hasobject:
                self.refuse(OBJECT_ARRAYS)
            return value
        known = self._classes.get(id(value)) if isinstance(value, type) else None
        if known is None:
            return value
        if known is np.ndarray:
            return self._array_class
        self.refuse(raw_class_refusal(known))
