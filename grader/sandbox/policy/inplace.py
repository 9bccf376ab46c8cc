"""Augmented assignment (`x += y`, `obj.a *= y`, `obj[k] @= y`) as the rewritten code of a
submission runs it: the operator named by its symbol, never one the code names."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

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


def inplace(symbol: str, target: Any, value: Any) -> Any:
    """`target op= value` for `_inplacevar_` and the item and attribute forms."""
    return _INPLACE_OPERATORS[symbol](target, value)
