"""CSV that a spreadsheet opens as text, in any locale: no cell of it can run as a formula.

A spreadsheet runs a cell whose text starts with `=`, `+`, `-` or `@` (CSV injection), and it
may see that start where the text does not show it:
- after leading spaces or invisible characters it drops (a space, NBSP, a zero-width space,
  a bidi override: app.core.visible_text);
- in a compatibility form (full-width U+FF1D, small U+FE62), which some read as `=` and `+`;
- after a separator of another locale: a file written with commas, opened where the list
  separator is `;` (much of Europe), a tab or the Arabic `؛`, splits an unquoted cell there,
  and a line break splits it wherever quotes are not honoured.

So the text is cut at every character that is, or stands for, such a separator, and each piece
whose first visible character is, or stands for, a formula's start gets an apostrophe in front
(where the piece begins): a spreadsheet shows such a cell as text, apostrophe hidden. Nothing
else of the text changes. Every CSV the service writes goes through `SafeCsvWriter`.
"""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Iterable
from typing import IO

from app.core.visible_text import first_visible

_FORMULA_STARTS = frozenset("=+-@")
# Commas and semicolons of every script that a locale may take as its list separator, the tab,
# and line breaks.
_SEPARATORS = frozenset(",;\t\r\n\u060c\u061b\u2028\u2029")
_TEXT_MARK = "'"


def safe_cell(value: object) -> str:
    """The cell's text, with an apostrophe before each piece of it that could start a formula
    (the pieces begin at its start and after each separator)."""
    text = "" if value is None else str(value)
    starts = [0, *(index + 1 for index, char in enumerate(text) if _stands_for(char, _SEPARATORS))]
    ends = [*starts[1:], len(text)]
    return "".join(_guarded(text[start:end]) for start, end in zip(starts, ends, strict=True))


def _guarded(piece: str) -> str:
    visible = first_visible(piece)
    if visible < len(piece) and _stands_for(piece[visible], _FORMULA_STARTS):
        return _TEXT_MARK + piece
    return piece


def _stands_for(char: str, chars: frozenset[str]) -> bool:
    """Whether `char` is one of `chars`, or its compatibility form (NFKD's first character:
    the full-width U+FF1D stands for `=`, and U+2260 "not equal" starts with one)."""
    return char in chars or unicodedata.normalize("NFKD", char)[:1] in chars


class SafeCsvWriter:
    """A CSV writer (RFC 4180 line ends) whose every cell goes through `safe_cell`."""

    def __init__(self, out: IO[str]) -> None:
        self._writer = csv.writer(out, lineterminator="\r\n")

    def writerow(self, cells: Iterable[object]) -> None:
        self._writer.writerow([safe_cell(cell) for cell in cells])
