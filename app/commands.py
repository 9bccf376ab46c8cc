"""What the service's commands share: a refusal the user can act on, said in one line."""

from __future__ import annotations


class CommandRefused(Exception):
    """A command that cannot be done as asked; `autograder` prints the message, exits 2."""
