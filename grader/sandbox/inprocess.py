"""A sandbox without isolation: the guest runs in the caller's own process.

For API tests (no fork, no warm process) and as the benchmark's floor: what grading costs with no
process boundary at all. Only the static policy applies, and no limit: never give it untrusted
code.
"""

from __future__ import annotations

import contextlib
from typing import NoReturn

from grader.contract import Execution, Job, Termination, Violation
from grader.sandbox import guest
from grader.sandbox.frames import ProtocolError
from grader.sandbox.interface import Layer
from grader.sandbox.protocol import Violated
from grader.sandbox.transcript import EventReporter, Transcript


class _RunEnded(BaseException):
    """Unwinds the submission at a guard violation. A BaseException, so `except Exception` lets
    it through; should a bare `except:` swallow it, the transcript, closed by the violation,
    refuses the next event and that ends the run instead."""


class InProcessSandbox:
    def run(self, job: Job) -> Execution:
        transcript = Transcript(job)

        def on_violation(violation: Violation) -> NoReturn:
            transcript.record(Violated(violation))
            raise _RunEnded

        with contextlib.suppress(_RunEnded, ProtocolError):
            guest.execute(job, EventReporter(transcript.record), on_violation)
        settled = transcript.settled()
        if settled is None:
            return transcript.execution(Termination.CRASHED, "the guest stopped early")
        return transcript.execution(settled)

    parallel_runs = 1  # one process, one global RNG

    def layers(self) -> list[Layer]:
        return [
            Layer("process", False, "runs in the grader's own process: no isolation, no limits")
        ]

    def close(self) -> None:
        """Nothing to stop."""
