"""Errors students meet, named: a plain finding for each kind of error a visible test raised.

A row says what was raised; the finding says what that error usually means and where to look,
once for every visible test that raised it. Recognised by the error's type and the words PyTorch
and NumPy (or the grader, for parameters laid out otherwise than the statement's) write it in.
What the finding repeats of the error is numbers and the student's own parameter names, from
visible tests only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from grader.contract import (
    MISSING_PARAMETERS,
    SHAPE_ASKED,
    UNEXPECTED_PARAMETERS,
    CallOutcome,
    RaisedError,
)
from grader.plan import ExercisePlan
from grader.report import Finding

# Parameter names quoted back, at most: a module may have hundreds.
_NAMES_SHOWN = 4


@dataclass(frozen=True)
class KnownError:
    code: str
    pattern: re.Pattern[str]  # searched in the error's message
    advice: str  # what it usually means; may use the pattern's named groups
    contract: bool = False  # the grader's own finding (RaisedError.contract), not an exception


def _known(code: str, pattern: str, advice: str, contract: bool = False) -> KnownError:
    return KnownError(code, re.compile(pattern), advice, contract)


KNOWN_ERRORS = (
    _known(
        "float-size",
        r"must be tuple of ints, but found element of type float|"
        r"'float' object cannot be interpreted as an integer",
        "a size is a float where an integer is needed: `/` always divides to a float in "
        "Python 3, and layer and reshape sizes must be integers, so divide sizes with `//`",
    ),
    _known(
        "matmul-sizes",
        r"cannot be multiplied|mismatch in its core dimension|size mismatch|"
        r"Expected size for first two dimensions of batch2 tensor",
        "the inner sizes of a matrix product differ: in `a @ b` the last axis of `a` must match "
        "the second-to-last of `b`; check which two axes you transpose (`transpose(-2, -1)`, "
        "not `.T` on more than two axes) and each layer's input size",
    ),
    _known(
        "sizes-do-not-broadcast",
        r"must match the size of tensor b|operands could not be broadcast",
        "two tensors of different sizes met in an elementwise operation: their axes line up "
        "from the right and each pair must be equal or 1; print both shapes (a mask, a table "
        "or a bias made for another length than the input's)",
    ),
    _known(
        "cat-sizes",
        r"Sizes of tensors must match except in dimension|"
        r"all the input array dimensions except for the concatenation axis must match",
        "the tensors joined by a concatenation differ along an axis they are not joined along: "
        "all axes but the one you concatenate along must match; check its `dim`",
    ),
    _known(
        "axis-out-of-range",
        r"Dimension out of range|axis -?\d+ is out of bounds for array of dimension",
        "an axis number is past the tensor's axes: a (B, T, C) tensor has axes 0 to 2, or -3 "
        "to -1; count the axes of the tensor at that line",
    ),
    _known(
        "index-out-of-bounds",
        r"index -?\d+ is out of bounds|out of range in self",
        "an index runs past the end of an axis: check which axis you index along and the range "
        "of the indices (classes along the last axis, positions up to the sequence's length)",
    ),
    _known(
        "reshape-sizes",
        r"shape '\[[\d, -]*\]' is invalid for input of size|cannot reshape array of size",
        "a reshape asks for another number of values than the tensor holds: the new sizes must "
        "multiply to the old ones' product; check the sizes you view or reshape to",
    ),
    _known(
        "view-of-transposed",
        r"view size is not compatible with input tensor's size and stride",
        "`.view` cannot reshape a tensor after a transpose or permute: use `.reshape(...)`, or "
        "`.contiguous().view(...)`",
    ),
    _known(
        "float64-mixed-in",
        r"expected scalar type (Float|Double) but found (Float|Double)|"
        r"expected m1 and m2 to have the same dtype|"
        r"expected (mat1 and mat2|both vectors) to have the same dtype",
        "float64 met float32: a tensor made from NumPy, or by torch.tensor from Python floats "
        "with a float64 array, is float64; make it float32 (`.float()`, `dtype=torch.float32`)",
    ),
    _known(
        "parameters-named-otherwise",
        rf"{MISSING_PARAMETERS} (?P<names>[\w., ]+)",
        "the grader loads the weights by the names the statement lays out, and your module has "
        "none named {names}: name the layers as the statement does, as attributes of the module "
        "or in an nn.ModuleList (layers kept in a plain list or dict are not the module's)",
        contract=True,
    ),
    _known(
        "parameters-named-otherwise",
        rf"{UNEXPECTED_PARAMETERS} (?P<names>[\w., ]+)",
        "your module has parameters the statement does not lay out ({names}): the grader loads "
        "the statement's weights by name, so an extra layer (where the statement reuses a "
        "weight, say) would never get one",
        contract=True,
    ),
    _known(
        "layer-sizes",
        rf"parameter (?P<name>[\w.]+) has shape (?P<got>\([\d, ]*\)), {SHAPE_ASKED} "
        r"(?P<want>\([\d, ]*\))",
        "a layer has other sizes than the statement's: {name} is {got}, the statement's is "
        "{want}; check the sizes each layer is made with",
        contract=True,
    ),
)


def error_findings(plan: ExercisePlan, outcomes: Mapping[str, CallOutcome]) -> list[Finding]:
    """One finding per kind of known error the visible tests raised, with the tests that raised
    it and the line of the first."""
    found: dict[str, tuple[str, int | None]] = {}  # code → the message and line of the first
    tests: dict[str, list[str]] = {}
    for test in plan.tests:
        outcome = outcomes.get(test.call.id)
        if not test.visible or outcome is None or outcome.error is None:
            continue
        named = _name(outcome.error)
        if named is not None:
            found.setdefault(named[0], (named[1], outcome.error.line))
            tests.setdefault(named[0], []).append(test.spec.name)
    return [
        Finding(code=code, message=message, tests=tests[code], line=line)
        for code, (message, line) in found.items()
    ]


def _name(error: RaisedError) -> tuple[str, str] | None:
    """The known error's code and what the student is told, or None where none is known."""
    for known in KNOWN_ERRORS:
        match = known.pattern.search(error.message) if known.contract == error.contract else None
        if match is not None:
            advice = known.advice.format(**_shortened(match.groupdict()))
            if error.contract:  # the grader's words, not an exception of theirs
                return known.code, f"{advice[0].upper()}{advice[1:]}."
            where = f" at line {error.line}" if error.line else ""
            return known.code, f"Your code raised {error.type_name}{where}: {advice}."
    return None


def _shortened(groups: dict[str, str]) -> dict[str, str]:
    names = groups.get("names")
    if names is not None:
        listed = [name.strip() for name in names.split(",") if name.strip()]
        more = len(listed) - _NAMES_SHOWN
        shown = ", ".join(listed[:_NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")
        groups = {**groups, "names": shown}
    return groups
