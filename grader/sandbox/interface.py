"""The one method a sandbox offers, so the runner and the service can swap implementations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: the layer probe imports this without numpy
    from grader.contract import Execution, Job


@dataclass(frozen=True)
class Layer:
    """One isolation layer and whether this host let the sandbox apply it."""

    name: str
    active: bool
    detail: str = ""


class Sandbox(Protocol):
    @property
    def parallel_runs(self) -> int:
        """How many runs may overlap (a grading then runs its visible and hidden tests at
        once); 1 where runs share a process, whose global RNG they would both draw from."""
        ...

    def run(self, job: Job) -> Execution:
        """Run the job's calls on the submission; never raises for anything the submission does."""
        ...

    def layers(self) -> list[Layer]:
        """The isolation layers this sandbox applies on this host."""
        ...

    def close(self) -> None:
        """Stop any process the sandbox keeps warm."""
        ...
