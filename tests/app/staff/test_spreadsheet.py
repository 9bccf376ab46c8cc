"""CSV cells no spreadsheet runs as formulas, whatever its locale (app.staff.spreadsheet)."""

from __future__ import annotations

import csv
import io
import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.core.visible_text import first_visible
from app.staff.spreadsheet import SafeCsvWriter, safe_cell

# What a spreadsheet in some locale may split a cell at, and read as a formula's start.
SEPARATORS = ",;\t\r\n\u060c\u061b\u2028\u2029\uff0c\uff1b"
STARTS = "=+-@"
# Text made of what matters here: starts, separators, spaces, invisible characters, their
# compatibility forms, apostrophes, and ordinary letters.
TRICKY = st.text(
    st.sampled_from(
        list(STARTS + SEPARATORS + " \u00a0\u3000\u200b\u202e\u2066\ufeff\u034f\ufe0f\u3164")
        + list("\uff1d\ufe62\uff20\u207a'a1")
    )
    | st.characters(),
    max_size=30,
)


def pieces_a_spreadsheet_may_read(cell: str) -> list[str]:
    """The cell cut at every separator any locale may use, each piece as a spreadsheet that
    drops leading spaces and invisible characters and reads compatibility forms would see it."""
    cuts = [0, *(i + 1 for i, char in enumerate(cell) if _norm(char)[:1] in SEPARATORS)]
    pieces = [cell[a:b] for a, b in zip(cuts, [*cuts[1:], len(cell)], strict=True)]
    return [_norm(piece[first_visible(piece) :]) for piece in pieces]


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKD", text)


@given(TRICKY)
@example("=1")
@example(" =1")
@example("\u00a0\u200b\u202e\uff1dcmd|' /C calc'!A0")
@example('s1;=HYPERLINK("http://x")')
@example("a\t\u3000@SUM(A1)")
def test_no_piece_of_a_written_cell_starts_a_formula(text: str) -> None:
    for piece in pieces_a_spreadsheet_may_read(safe_cell(text)):
        assert not piece.startswith(tuple(STARTS)), (text, piece)


@given(TRICKY)
def test_the_guard_only_adds_apostrophes(text: str) -> None:
    written = safe_cell(text)
    assert written.replace("'", "") == text.replace("'", "")
    assert len(written) - len(text) <= len(pieces_a_spreadsheet_may_read(text))


@given(st.text(st.characters(categories=["L", "N"]) | st.sampled_from(" .'_()"), max_size=30))
def test_text_that_starts_no_formula_is_written_as_it_is(text: str) -> None:
    assert safe_cell(text) == text


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("=1", "'=1"),
        ("\ufe621", "'\ufe621"),  # a small plus sign
        ("a;=1", "a;'=1"),
        ("a\u061b-1", "a\u061b'-1"),  # the Arabic semicolon, a list separator of Windows
        ("a; b", "a; b"),
        ("s1234567", "s1234567"),
        (None, ""),
        (7.5, "7.5"),
    ],
)
def test_examples(text: object, written: str) -> None:
    assert safe_cell(text) == written


def test_the_writer_guards_every_cell() -> None:
    out = io.StringIO()
    SafeCsvWriter(out).writerow(["=a", "b;@c", None, 3])
    assert out.getvalue() == "'=a,b;'@c,,3\r\n"
    assert next(csv.reader(io.StringIO(out.getvalue()))) == ["'=a", "b;'@c", "", "3"]
