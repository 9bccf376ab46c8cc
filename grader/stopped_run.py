"""Why a visible run stopped before its last call, said once: on the test whose call it stopped
at, or on the report when it stopped outside any test (importing the module, between calls). The
tests it never reached say only that they did not run."""

from __future__ import annotations

from collections.abc import Sequence

from grader.contract import Execution, Termination
from grader.limits import MIB, SandboxLimits
from grader.plan import TestPlan


def stopped_at(execution: Execution, tests: Sequence[TestPlan]) -> TestPlan | None:
    """The visible test whose own call the run stopped at, if it stopped at one."""
    return next((test for test in tests if test.call.id == execution.interrupted_call), None)


def not_run_message(at: TestPlan | None) -> str:
    where = f"at test {at.spec.name!r}" if at is not None else "before it"
    return f"not run: the run stopped {where}"


def stop_reason(execution: Execution, limits: SandboxLimits) -> str:
    """What ended the run, in the student's terms, its code the subject; the sandbox's detail
    names the one limit that was hit, where it knows which (the status says "timeout")."""
    detail = execution.detail
    match execution.termination:
        case Termination.TIMEOUT:
            what = detail or (
                f"ran past its time limit ({limits.wall_s:g} s, {limits.cpu_s:g} s of CPU)"
            )
            return f"{what}; look for a loop that never ends"
        case Termination.MEMORY:
            return f"ran out of its {limits.memory_bytes // MIB} MiB of memory{_aside(detail)}"
        case Termination.OUTPUT_LIMIT:
            return f"sent back more than {limits.output_bytes // MIB} MiB of output{_aside(detail)}"
        case _:
            return f"stopped the process running it{_aside(detail)}"


def _aside(detail: str) -> str:
    return f" ({detail})" if detail else ""
