"""`str.format` for submissions: its fields read attributes and items through the guards."""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

FORMAT_METHODS = frozenset({"format", "format_map"})


class _Reader(Protocol):
    def attribute(self, obj: object, name: str) -> Any: ...

    def item(self, obj: Any, key: object) -> Any: ...


_FORMAT_FIELD = re.compile(r"(?P<first>[^.\[]*)(?P<rest>(?:\.[^.\[]+|\[[^\]]+\])*)")
_FORMAT_STEP = re.compile(r"\.(?P<attribute>[^.\[]+)|\[(?P<index>[^\]]+)\]")


class GuardedFormatter(string.Formatter):
    """`str.format`, whose `{0.name}` and `{0[key]}` fields would otherwise read attributes
    and items past the guards."""

    def __init__(self, guards: _Reader) -> None:
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
