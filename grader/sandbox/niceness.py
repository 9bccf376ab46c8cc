"""Grading yields the CPU to the service that started it.

At a deadline the API must answer a POST in milliseconds while the graders use what is left. Ten
steps of niceness make a runnable grading child weigh about a tenth of a process at the service's
niceness (110 against 1024 in the kernel's table), so on a core shared with two busy children the
API still gets over four fifths of it; five steps (a third) would leave it under two thirds. An
idle service takes nothing: the children then have every core, and a grading alone on the
machine is no slower.

Where the kernel groups processes by session (autogroup, on most desktop and server kernels
outside a container's cgroup), a task's niceness only weighs it against its own session, and the
warm process and each child have a session of their own: the session's niceness is set too.
"""

from __future__ import annotations

import contextlib
import os

GRADING_NICENESS = 10


def yield_to_service() -> None:
    """Make this process, the warm process in a session of its own, and so its children nicer."""
    os.nice(GRADING_NICENESS)  # relative to the service's, capped at the nicest (19)
    match_session()


def match_session() -> None:
    """Give this process's session (just made: a new one starts at 0) the process's niceness."""
    # No such file: the kernel does not group by session, and the task's niceness is what counts.
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as autogroup:
        autogroup.write(str(os.getpriority(os.PRIO_PROCESS, 0)))
