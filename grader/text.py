"""Student text made inert for a terminal: what a submission printed or raised, shown as text.

A report keeps what the submission sent (JSON escapes control characters itself); each text
rendering passes its output through `inert` so that no terminal acts on it: no escape sequence
(clear the screen, set the window title, move the cursor back over a line), no carriage return
to overwrite a line, no bidi override to make a line read differently from what it holds.

The notebook client (client/autograder_client/render.py) carries a copy of these few lines,
since it cannot import the grader; tests/grader/test_text.py keeps the two equal.
"""

from __future__ import annotations

from itertools import chain

# Replaced, not stripped: the reader sees that something was there, and removing a character
# can't join the text around it into words the submission did not show.
REPLACEMENT = "\ufffd"

_UNSAFE = chain(
    (code for code in range(0x20) if chr(code) not in "\n\t"),  # C0: ESC, BEL, CR, NUL, ...
    [0x7F],  # DEL
    range(0x80, 0xA0),  # C1: CSI (U+009B) and OSC (U+009D) act like ESC [ and ESC ]
    range(0x202A, 0x202F),  # bidi embeddings and overrides: LRE, RLE, PDF, LRO, RLO
    range(0x2066, 0x206A),  # bidi isolates: LRI, RLI, FSI, PDI
)
_TABLE = dict.fromkeys(_UNSAFE, REPLACEMENT)


def inert(text: str) -> str:
    """`text` with every control character but newline and tab, and every bidi override or
    isolate, replaced; all other text (accents, CJK, emoji, math) is left as it is."""
    return text.translate(_TABLE)
