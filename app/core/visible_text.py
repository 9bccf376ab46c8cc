"""Characters that show nothing: what a reader, or a spreadsheet, may skip or not see at all.

Controls and format characters (zero-width spaces and joiners, bidi embeddings, overrides and
isolates, the byte-order mark, the soft hyphen), line and paragraph separators, unassigned,
private-use and surrogate code points, and the rest of Unicode's default-ignorable code points
(variation selectors, Hangul fillers, the combining grapheme joiner), which no font draws.
"""

from __future__ import annotations

import unicodedata

_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt) outside those categories.
_IGNORABLE_RANGES = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0x1D173, 0x1D17A),  # musical symbol format characters
    (0xE0100, 0xE01EF),  # variation selectors supplement
)


def is_invisible(char: str) -> bool:
    """Whether `char` (one character) shows nothing, not even as a space."""
    if unicodedata.category(char) in _INVISIBLE_CATEGORIES:
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _IGNORABLE_RANGES)


def first_visible(text: str, start: int = 0) -> int:
    """Where the first character of `text[start:]` that is neither a space nor invisible is
    (`len(text)` when there is none)."""
    index = start
    while index < len(text) and (text[index].isspace() or is_invisible(text[index])):
        index += 1
    return index
