"""Library methods that make (or look up) an attribute under a name they are given.

`setattr(obj, name, value)` in a submission is a guard, which refuses a special name. But torch's
containers call setattr for themselves with any key: `nn.ParameterDict` stores each value, of any
type, as an attribute named by its key, so `{"__array_interface__": {...}}` would give an object
that numpy then copies from at any address. `nn.Module.add_module`, `register_buffer`,
`register_parameter`, `set_submodule` (and `nn.ModuleDict`, `nn.Sequential`, `register_module`,
which go through `add_module`) do the same with modules and tensors.

The name is checked in those methods themselves, in the child, for one job (`install`): they are
reached not only through the guards but from a constructor (`nn.ParameterDict({...})`), an
operator (`params | {...}`) and an item (`params[key] = value`), which call them with no guard
in between. `ParameterDict._key_to_attr` is the one place every key of a ParameterDict passes,
read or written. A name is refused as an attribute is (`names.attribute_problem`: special and
frame names), and so is a private name that the library itself defines on the object
(`_parameters`, `_apply`): that is torch's state, not a key.

Library code calls these methods too (every `nn.Linear` registers its "weight" and "bias"):
a name that neither starts with `_` nor names a frame attribute costs one look.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from grader.sandbox.policy.names import attribute_problem, is_private, private_refusal
from grader.sandbox.policy.ownership import defined_by_library
from grader.sandbox.policy.patches import Patches, Refuse
from grader.sandbox.policy.refusals import quotable


@dataclass(frozen=True)
class _NamingMethod:
    owner: type
    method: str
    parameter: str  # the name argument: its name, and it comes first after `self`
    storing: bool  # the method sets the attribute (else it only looks it up)
    dotted: bool = False  # a path of names ("encoder.layers.0")


NAMING_METHODS = (
    _NamingMethod(torch.nn.Module, "add_module", "name", storing=True),
    _NamingMethod(torch.nn.Module, "register_buffer", "name", storing=True),
    _NamingMethod(torch.nn.Module, "register_parameter", "name", storing=True),
    _NamingMethod(torch.nn.Module, "set_submodule", "target", storing=True, dotted=True),
    _NamingMethod(torch.nn.Module, "get_submodule", "target", storing=False, dotted=True),
    _NamingMethod(torch.nn.Module, "get_parameter", "target", storing=False, dotted=True),
    _NamingMethod(torch.nn.Module, "get_buffer", "target", storing=False, dotted=True),
    # Every key of a ParameterDict, read, written or deleted, however it was passed. Checked as
    # a write: a read of `params["__dict__"]` would hand out the container's internals.
    _NamingMethod(torch.nn.ParameterDict, "_key_to_attr", "key", storing=True),
)


# Where a ParameterDict's key becomes an attribute name: its item methods, which a subclass
# cannot replace (special methods other than `__getitem__` cannot be defined, and its own
# `__getitem__` runs guarded). Each checks the key again and that `_key_to_attr` is still the
# checked one, so that no subclass steps over the check (see `Ownership.shadowed_internals`,
# which refuses such a subclass when it is made).
KEY_METHODS = (
    _NamingMethod(torch.nn.ParameterDict, "__getitem__", "key", storing=True),
    _NamingMethod(torch.nn.ParameterDict, "__setitem__", "key", storing=True),
    _NamingMethod(torch.nn.ParameterDict, "__delitem__", "key", storing=True),
)


def install(patches: Patches, refuse: Refuse) -> None:
    """Check the name argument of every naming method, for one job."""
    for naming in NAMING_METHODS:
        original = vars(naming.owner)[naming.method]
        patches.replace(naming.owner, naming.method, _checked(naming, original, refuse))
    key_to_attr = vars(torch.nn.ParameterDict)["_key_to_attr"]
    for naming in KEY_METHODS:
        original = _checked(naming, vars(naming.owner)[naming.method], refuse)
        patches.replace(naming.owner, naming.method, _keyed(original, key_to_attr, refuse))


def name_refusal(obj: object, name: str, *, storing: bool) -> str | None:
    """Why `name` may not become (or be looked up as) an attribute of `obj` through a library
    method; None when it may."""
    if attribute_problem(name, storing=storing) is not None:
        return (
            f"`{quotable(obj, name)}` cannot name a key, a buffer, a parameter or a submodule: "
            "it becomes an attribute, and special names (double underscores) reach into "
            "Python's internals or are read by libraries for raw memory (`__array_interface__`)"
        )
    if is_private(name) and defined_by_library(obj, name):
        return private_refusal(quotable(obj, name))
    return None


def _checked(
    naming: _NamingMethod, original: Callable[..., Any], refuse: Refuse
) -> Callable[..., Any]:
    @functools.wraps(original)
    def checked(self: object, *args: Any, **kwargs: Any) -> Any:
        given = args[0] if args else kwargs.get(naming.parameter)
        # Most names are a layer's own ("weight", "0"): one look at the first character.
        if type(given) is str and (
            naming.dotted or given[:1] == "_" or given in INSPECT_ATTRIBUTES
        ):
            for name in given.split(".") if naming.dotted else (given,):
                problem = name_refusal(self, name, storing=naming.storing)
                if problem is not None:
                    refuse(problem)
        return original(self, *args, **kwargs)

    return checked


def _keyed(
    checked: Callable[..., Any], key_to_attr: Callable[..., Any], refuse: Refuse
) -> Callable[..., Any]:
    @functools.wraps(checked)
    def keyed(self: object, *args: Any, **kwargs: Any) -> Any:
        if getattr(type(self), "_key_to_attr", None) is not key_to_attr:
            refuse(private_refusal(f"{type(self).__name__}._key_to_attr"))
        return checked(self, *args, **kwargs)

    return keyed
