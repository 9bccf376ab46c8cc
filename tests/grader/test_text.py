"""`inert`: no terminal acts on student text, and ordinary text is left as it is."""

from __future__ import annotations

import unicodedata

from autograder_client import render as client_render
from hypothesis import given
from hypothesis import strategies as st

from grader.text import REPLACEMENT, inert

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
CONTROLS = [chr(code) for code in range(0xA0) if unicodedata.category(chr(code)) == "Cc"]
# Any text, with the characters that matter drawn as often as the rest.
ANY = st.text(st.one_of(st.characters(), st.sampled_from([*CONTROLS, *BIDI])))
# Text a terminal shows as it is: no control character (category Cc) but newline and tab, no bidi
# override or isolate.
PLAIN = st.text(
    st.one_of(
        st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters=BIDI),
        st.sampled_from("\n\t"),
    )
)


def acted_on(char: str) -> bool:
    """Whether a terminal acts on `char` rather than shows it, by Unicode's own categories."""
    return (unicodedata.category(char) == "Cc" and char not in "\n\t") or char in BIDI


@given(ANY)
def test_no_control_character_but_newline_and_tab_survives(text: str) -> None:
    assert [char for char in inert(text) if acted_on(char)] == []


@given(ANY)
def test_exactly_those_characters_are_replaced_one_for_one(text: str) -> None:
    assert inert(text) == "".join(REPLACEMENT if acted_on(char) else char for char in text)


@given(PLAIN)
def test_plain_text_is_unchanged(text: str) -> None:
    assert inert(text) == text


def test_ordinary_unicode_is_unchanged() -> None:
    text = "café naïve Ærøskøbing 注意力机制 👩‍🔬🔥 ∑ᵢ √d ≤ ∞ → αβγ\ttab\nline"
    assert inert(text) == text


def test_a_terminal_attack_is_shown_not_acted_on() -> None:
    attack = "\x1b[2J\x1b]0;pwned\x07\r\x9b2J\x00\x7f\u202eSSAP"
    assert inert(attack) == "\ufffd[2J\ufffd]0;pwned\ufffd\ufffd\ufffd2J\ufffd\ufffd\ufffdSSAP"


@given(ANY)
def test_the_client_s_copy_is_the_same_function(text: str) -> None:
    assert client_render._inert(text) == inert(text)
