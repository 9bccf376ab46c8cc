"""Running a submission's source through `guest.execute` in this process, under the policy's
runtime guards, with an `on_violation` that raises instead of ending the process."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import NoReturn

import pytest

from grader.contract import Call, CallOutcome, Job, Policy, Violation
from grader.limits import SandboxLimits
from grader.sandbox.guest import execute

TORCH_POLICY = Policy(
    allowed_imports=("torch", "torch.nn", "torch.nn.functional", "math", "typing"),
    forbidden=(
        "torch.nn.MultiheadAttention",
        "torch.nn.functional.scaled_dot_product_attention",
    ),
)
NUMPY_POLICY = Policy(allowed_imports=("numpy", "math"))


class Recorder:
    """A Reporter that keeps what it is told."""

    def __init__(self) -> None:
        self.rejections: list[tuple[Violation, ...]] = []
        self.started_calls: list[str] = []
        self.outcomes: list[CallOutcome] = []

    def rejected(self, violations: Sequence[Violation]) -> None:
        self.rejections.append(tuple(violations))

    def started(self, call: Call) -> None:
        self.started_calls.append(call.id)

    def finished(self, outcome: CallOutcome) -> None:
        self.outcomes.append(outcome)


class Ended(BaseException):
    """Stands in for the real sandbox's exit on a violation (tests only)."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.message)
        self.violation = violation


def end_run(violation: Violation) -> NoReturn:
    raise Ended(violation)


def run(
    source: str,
    *,
    policy: Policy = TORCH_POLICY,
    kind: str = "function",
    entry_point: str = "f",
    calls: tuple[Call, ...] = (Call(id="only", args=()),),
    limits: SandboxLimits | None = None,
) -> Recorder:
    recorder = Recorder()
    job = Job(
        source=textwrap.dedent(source),
        entry_point=entry_point,
        kind=kind,
        framework="torch",
        policy=policy,
        calls=calls,
        limits=limits or SandboxLimits(),
    )
    execute(job, recorder, end_run)
    return recorder


def printed(source: str, policy: Policy = TORCH_POLICY) -> str:
    """What a probe prints at load time (reported with the first call, to an `f` added here)."""
    (outcome,) = run(textwrap.dedent(source) + "\ndef f():\n    pass\n", policy=policy).outcomes
    return outcome.stdout


def violation_of(source: str, policy: Policy = TORCH_POLICY) -> Violation:
    with pytest.raises(Ended) as ended:
        run(source, policy=policy)
    return ended.value.violation
