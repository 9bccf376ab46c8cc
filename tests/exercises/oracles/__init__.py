"""An independent computation of every exercise's outputs, to check its reference against.

Each module of this package defines `ORACLES`, by exercise slug: a function of a test, the inputs
of each of its calls (as `grader.inputs` draws them) and the parameters the grader loads (empty
unless the exercise's weights are the grader's), returning every output of every call, in order.
An oracle never imports the reference: it computes with the built-ins the exercise imitates, or a
formulation of its own.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

import numpy as np

from grader.contract import Arg
from grader.spec import TestCaseSpec

Arrays = tuple[np.ndarray, ...]
Parameters = dict[str, np.ndarray]
Oracle = Callable[[TestCaseSpec, tuple[tuple[Arg, ...], ...], Parameters], Arrays]


def every_oracle() -> dict[str, Oracle]:
    """The oracles of every module of this package, by slug."""
    found: dict[str, Oracle] = {}
    for module in pkgutil.iter_modules(__path__):
        found.update(importlib.import_module(f"{__name__}.{module.name}").ORACLES)
    return found
