"""The checks put into the libraries for one job: those that must hold whoever calls.

`guest.execute` enters `guarded_libraries` before it builds the runtime guards (which then know
a replaced forbidden function by its identity) and before any of the submission's code runs,
and leaves it when the job is done (see `patches` for why, and why the submission cannot undo
it). Per job, not once in the warm process: exercises forbid different APIs, and a refusal ends
this job's run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

from grader.contract import Policy, Violation
from grader.sandbox.policy import forbidden_calls, naming
from grader.sandbox.policy.patches import patched
from grader.sandbox.policy.refusals import submission_line


@contextmanager
def guarded_libraries(
    policy: Policy, on_violation: Callable[[Violation], NoReturn]
) -> Iterator[None]:
    def refuse(message: str) -> NoReturn:
        on_violation(Violation(message, submission_line()))

    with patched() as patches:
        naming.install(patches, refuse)
        forbidden_calls.install(policy.forbidden, patches, refuse)
        yield
