"""The order of a run's events, and the `Execution` they add up to."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from grader.contract import Call, CallOutcome, Execution, Job, Termination, Violation
from grader.sandbox.frames import ProtocolError
from grader.sandbox.protocol import Event, Finished, Rejected, Started, Violated


class Transcript:
    """The events of one run, checked for order, and the `Execution` they add up to."""

    def __init__(self, job: Job) -> None:
        self._calls = [call.id for call in job.calls]
        self.outcomes: dict[str, CallOutcome] = {}
        self.running: str | None = None  # started, not finished
        self.violations: tuple[Violation, ...] = ()
        self.rejected = False

    @property
    def complete(self) -> bool:
        """Whether the child said all it had to: a rejection, or every call's outcome."""
        return self.rejected or len(self.outcomes) == len(self._calls)

    def record(self, event: Event) -> None:
        if self.complete or self.violations:
            raise ProtocolError(f"a {type(event).__name__} event after the run was over")
        match event:
            case Rejected(violations):
                self._expect(not self.outcomes and self.running is None, "a late rejection")
                self.rejected, self.violations = True, violations
            case Started(call_id):
                expected = self._calls[len(self.outcomes)]
                self._expect(
                    self.running is None and call_id == expected,
                    f"call {call_id!r} started out of turn",
                )
                self.running = call_id
            case Finished(outcome):
                self._expect(
                    outcome.call_id == self.running,
                    f"call {outcome.call_id!r} finished without starting",
                )
                self.outcomes[outcome.call_id] = outcome
                self.running = None
            case Violated(violation):
                self.violations = (violation,)

    def settled(self) -> Termination | None:
        """How the run ended, if the events alone say so (a rejection, a violation, or every
        call's outcome); None while the child still has something to report."""
        if self.rejected:
            return Termination.REJECTED
        if self.violations:
            return Termination.VIOLATION
        if self.complete:
            return Termination.COMPLETED
        return None

    def _expect(self, condition: bool, problem: str) -> None:
        if not condition:
            raise ProtocolError(problem)

    def execution(
        self, termination: Termination, detail: str = "", *, starved: bool = False
    ) -> Execution:
        return Execution(
            termination=termination,
            outcomes=dict(self.outcomes),
            interrupted_call=self.running,
            violations=self.violations,
            detail=detail,
            starved=starved,
        )


class EventReporter:
    """The guest's reporter (see `guest.Reporter`) as a stream of events handed to `emit`."""

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self._emit = emit

    def rejected(self, violations: Sequence[Violation]) -> None:
        self._emit(Rejected(tuple(violations)))

    def started(self, call: Call) -> None:
        self._emit(Started(call.id))

    def finished(self, outcome: CallOutcome) -> None:
        self._emit(Finished(outcome))
