"""What the service's commands share: a refusal the user can act on, said in one line, and the
tab-separated tables that `list` commands print (a header line first, for people and for `cut`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime


class CommandRefused(Exception):
    """A command that cannot be done as asked; `autograder` prints the message, exits 2."""


def print_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    print("\t".join(header))
    for row in rows:
        print("\t".join(str(field) for field in row))


def moment(when: datetime | None) -> str:
    """A time as a table shows it: to the second, or `-` for none."""
    return when.isoformat(timespec="seconds") if when else "-"
