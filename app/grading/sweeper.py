"""The sweeper: unfinished work that nobody answers for goes back to its dispatcher.

Correctness does not rest on the broker, nor on any process staying alive: every
`sweep_interval_s`, in every API process and every worker, a sweeper reads the orphans from
the database (app.grading.leases: an expired lease, or a grader wedged past
`running_stale_after_s`), takes each with a conditional UPDATE (so of several sweepers one sends it)
and dispatches it again. A dead grader's row goes back to queued, keeping its attempt count, so a
submission that keeps killing graders ends in an error report.

Duplicates are harmless (a grader's claim lets one through); a lost row is not, so the sweeper
errs on the side of sending again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.core.periodic import Periodic
from app.grading.leases import Leases

log = logging.getLogger(__name__)


class Sweeper:
    def __init__(
        self, leases: Leases, dispatch: Callable[[str], object], *, period_s: float
    ) -> None:
        self._leases = leases
        self._dispatch = dispatch
        self._loop = Periodic("sweeper", period_s, self.sweep)

    def start(self) -> None:
        """Sweep now, then every period."""
        self._loop.start()

    def close(self) -> None:
        self._loop.close()

    def sweep(self) -> list[str]:
        """One pass; returns the submissions dispatched again."""
        taken = [orphan for orphan in self._leases.orphans() if self._leases.take(orphan)]
        for submission_id in taken:
            log.warning(
                "re-dispatching a submission nobody held", extra={"submission_id": submission_id}
            )
            self._dispatch(submission_id)
        return taken
