"""What a reference module declares besides its correct implementation, to explain mistakes.

A reference module in `reference/` defines the exercise's entry point under the same name
(the class or function the statement asks for) and may define:

    VARIANTS: tuple[WrongVariant, ...]
        known-wrong versions of the entry point (or, with `of`, of another entry point the
        exercise names); a failing output that equals one of them gets that variant's
        message. Variants may share a code (and its message), for one mistake written two
        ways: the student gets one finding.
    WEIGHT_PROBE: WeightProbe
        reference weights to load into the submission by name suffix; if the submission then
        matches the reference, its math is right and only its weights differed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grader.contract import Scalar


@dataclass(frozen=True)
class WrongVariant:
    """A known-wrong version of an entry point: one of the reference module's VARIANTS, or a file
    of the exercise's `mistakes/` that mistakes.toml declares with `variant =`."""

    code: str  # stable identifier, e.g. "missing-scaling"
    message: str  # addressed to the student: what their code does and what to change
    entry: object  # a class or function with the entry point's signature
    # The entry point it is a wrong version of (an exercise's `entries`); None: the main one.
    of: str | None = None
    # The knowledge components it is about (`grader.concepts`); none: those of its code.
    concepts: tuple[str, ...] = ()


@dataclass(frozen=True)
class WeightProbe:
    # Given a test's constructor arguments: parameter values keyed by the suffix of their name.
    parameters: Callable[[dict[str, Scalar]], dict[str, np.ndarray]]
    message: str
