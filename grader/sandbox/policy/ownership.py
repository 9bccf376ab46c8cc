"""What a submission owns: the classes it defines, their instances, and their private names.

Owned objects are the submission's to change (`self.heads = ...` on its own module). On them, a
private name (`self._cache`, `self._split_heads(x)`, `Net._causal_mask(T)`) is the submission's
own when its source defines it (or its code set it with `setattr`), unless a library put it
there: every nn.Module instance carries torch's `_parameters`, `_modules`, `_forward_hooks`...,
and its class inherits `_apply`, `_call_impl`... Those are the library's internals, reached
through the submission's object, and stay refused like any foreign private name (`torch._C`,
`tensor._base`, `function._x`).
"""

from __future__ import annotations

import functools

import torch

from grader.sandbox.policy.autograd import context_class, is_function_context
from grader.sandbox.policy.names import SUBMISSION_MODULE


@functools.cache
def _module_instance_internals() -> frozenset[str]:
    """The attributes that `nn.Module.__init__` sets on every instance."""
    return frozenset(vars(torch.nn.Module()))


class Ownership:
    """The classes one run of a submission defined, by identity, and its private names."""

    def __init__(self, private_names: frozenset[str]) -> None:
        self._classes: dict[int, type] = {}  # holds each class so that its id stays its own
        self._names = set(private_names)
        # The private instance attributes the submission's own writes made, by object, with the
        # value each was given; each object is held so that its id stays its own.
        self._written: dict[int, tuple[object, dict[str, object]]] = {}

    def adopt(self, cls: type) -> None:
        """Note `cls` as defined by the submission (its class statement just ran), and, for a
        custom autograd Function, the class of its contexts, which torch made with it: `ctx` is
        the submission's own object as much as `self` is (`autograd.context_class`)."""
        for own in (cls, context_class(cls)):
            if own is not None:
                self._classes[id(own)] = own

    def shadowed_internals(self, defined: type) -> list[str]:
        """The library's private names that the submission's classes on `defined`'s MRO bind,
        `defined` itself and its own bases alike: a mixin of its own put first (`class
        Open(Mixin, nn.ParameterDict)`) overrides the library's method as surely as a body
        that binds it. Refused: nn.Module's instance internals (a property named `_parameters`
        would be handed torch's own dict by `nn.Module.__init__`), and any private name that a
        library class on the MRO defines (overriding `ParameterDict._key_to_attr` would skip the
        check of every key that the sandbox puts there, see `naming`; `_call_impl` runs every
        module call). Judged when a class is made: a class is never writable afterwards."""
        own = [cls for cls in defined.__mro__ if cls is defined or id(cls) in self._classes]
        foreign = [cls for cls in defined.__mro__ if cls not in own]
        internals = _module_instance_internals() if issubclass(defined, torch.nn.Module) else set()
        found: set[str] = set()
        for cls in own:
            bound = vars(cls).keys()
            found |= {
                name
                for name in bound
                # the source's own names: a metaclass adds some of its own (ABCMeta's `_abc_impl`)
                if name in self._names and any(name in vars(base) for base in foreign)
            }
            found |= bound & internals
        return sorted(found)

    def record_write(self, obj: object, name: str, value: object) -> None:
        """Note that the submission itself set the private attribute `name` of `obj` to
        `value`: the attribute is its own for as long as it holds that value."""
        self._written.setdefault(id(obj), (obj, {}))[1][name] = value

    def write_target(self, obj: object) -> object:
        """What a write of a private attribute of `obj` (its own) goes through: it notes the
        value written, which the attribute is the submission's for as long as it holds."""
        return _OwnWrite(obj, self)

    def owns_instance(self, obj: object) -> bool:
        return id(type(obj)) in self._classes

    def claim(self, obj: object, name: str) -> None:
        """Note a private name that the submission sets by `setattr` on its own object."""
        if self._owning_class(obj) is not None and not self._library_defines(obj, name):
            self._names.add(name)

    def owns_private(self, obj: object, name: str) -> bool:
        """Whether the private attribute `name` of `obj` is the submission's own."""
        return (
            name in self._names
            and self._owning_class(obj) is not None
            and not self._library_defines(obj, name)
        )

    def _library_defines(self, obj: object, name: str) -> bool:
        owner = self._owning_class(obj)
        if owner is None:
            return True
        if isinstance(obj, super):  # it looks up class attributes only
            return _library_class_defines(owner.__mro__, name)
        if isinstance(obj, type):  # and what the class's metaclass defines (ABCMeta's...)
            metaclass: type = type(obj)
            return _library_class_defines((*owner.__mro__, *metaclass.__mro__), name)
        if defined_by_library(obj, name):
            return True
        # Set on the instance, but not to what the submission wrote there: by a library layer's
        # own __init__ (nn.GRU's `_flat_weights`), even where the submission wrote the name
        # first to claim it. Judged by the value, since whoever writes last owns what is there.
        instance_dict: dict[str, object] = getattr(obj, "__dict__", {})
        if name not in instance_dict:
            return False
        written = self._written.get(id(obj), (None, {}))[1]
        return name not in written or written[name] is not instance_dict[name]

    def _owning_class(self, obj: object) -> type | None:
        """The submission's class behind `obj`: the class itself, an instance's class, or the
        class that `super()` looks past."""
        if isinstance(obj, super):  # looks up class attributes only, along its object's MRO
            # typeshed leaves out `__self_class__`: the class of the object super() was given.
            seen_from: type | None = obj.__self_class__  # type: ignore[attr-defined]
            return seen_from if seen_from is not None and id(seen_from) in self._classes else None
        if isinstance(obj, type):
            return obj if id(obj) in self._classes else None
        return type(obj) if self.owns_instance(obj) else None


class _OwnWrite:
    """The target of `obj._name = value` on the submission's own `obj`: sets the attribute on
    `obj` and notes the value (`Ownership.record_write`)."""

    __slots__ = ("_ownership", "_target")
    _ownership: Ownership
    _target: object

    def __init__(self, target: object, ownership: Ownership) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_ownership", ownership)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._target, name, value)
        self._ownership.record_write(self._target, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._target, name)


def defined_by_library(obj: object, name: str) -> bool:
    """Whether a library class of `obj` (or `nn.Module.__init__`, on every module, or a library
    object's own `__init__`: `ParameterDict._keys`, but not a custom Function's `ctx`, whose
    instance attributes are all its Function's) defines `name`. A class the submission did
    not write is told by its module, which a submission cannot set (`__module__` is a special
    name)."""
    if _library_class_defines(obj.__mro__ if isinstance(obj, type) else type(obj).__mro__, name):
        return True
    if isinstance(obj, torch.nn.Module) and name in _module_instance_internals():
        return True
    library_object = type(obj).__module__ != SUBMISSION_MODULE and not is_function_context(obj)
    return library_object and name in getattr(obj, "__dict__", {})


def _library_class_defines(classes: tuple[type, ...], name: str) -> bool:
    """Whether a class of `classes` that the submission did not write defines `name` (a method
    or class attribute of torch's, typing's...)."""
    return any(name in vars(cls) for cls in classes if cls.__module__ != SUBMISSION_MODULE)
