"""What an exercise's `[trainability]` table says: which checks of `grader.trainability` run,
and whether they count.

    [trainability]
    counts = "reported"            # "scored" (the default), "reported" or "off"
    checks = ["gradients", "stability"]   # default: every check the framework allows
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Counting(StrEnum):
    """How an exercise's trainability checks (`grader.trainability`) count."""

    SCORED = "scored"  # a test passes only where the code also trains as the reference does
    REPORTED = "reported"  # findings and properties that cost no points
    OFF = "off"


class TrainabilityCheck(StrEnum):
    GRADIENTS = "gradients"  # gradients of inputs and parameters, a graph to every weight
    OPTIMIZER_STEP = "optimizer_step"  # one SGD step on module.parameters() moves the outputs
    STABILITY = "stability"  # the inputs scaled up: finite and close where the reference is


# The checks a gradient pass decides (`grader.backprop`): an exercise with either runs one.
GRADIENT_PASS = (TrainabilityCheck.GRADIENTS, TrainabilityCheck.OPTIMIZER_STEP)
# What a NumPy exercise can be checked for: its code has no autograd.
_NUMPY_CHECKS = (TrainabilityCheck.STABILITY,)


class TrainabilitySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    counts: Counting = Counting.SCORED
    # None: every check the exercise's framework allows.
    checks: list[TrainabilityCheck] | None = None

    def in_effect(self, *, numpy: bool) -> tuple[TrainabilityCheck, ...]:
        if self.counts is Counting.OFF:
            return ()
        if self.checks is not None:
            return tuple(self.checks)
        return _NUMPY_CHECKS if numpy else tuple(TrainabilityCheck)

    @property
    def scored(self) -> bool:
        return self.counts is Counting.SCORED

    def check_numpy(self) -> None:
        if set(self.checks or ()) - set(_NUMPY_CHECKS):
            raise ValueError("a NumPy exercise has no gradients: its trainability is stability")
