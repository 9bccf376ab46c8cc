"""Student ids as the service keeps them: one spelling per student.

Every id that enters (a submission's `student_id`, `?student_id=`, the staff routes, a
regrade, `autograder students link|revoke`) is taken in its normal form, so `carol`, `Carol`,
`carol ` and `carol` in full-width letters are one student with one attempt budget:
- NFKC: compatibility forms become the plain ones (full-width letters, ligatures);
- case-folded: ids are case-insensitive (`Carol` is `carol`): a school's ids are typed by people
  (`S1234567`, an e-mail address), and one student must not have two budgets;
- trimmed, each run of spaces inside made one space.
An id with an invisible or control character (a zero-width space, a bidi override, a tab:
app.core.visible_text) is refused, since it would show as another id: 422, or exit 2 for a command.

Ids in the `lti:` namespace are made by LMS launches from the platform's `sub`, which is opaque
and compared byte for byte: they are kept exactly as given, and only a launch makes them.
Ids stored before this rule keep their spelling (no migration): see docs/service.md.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator, Field

from app.core.models import LTI_STUDENTS
from app.core.visible_text import is_invisible

MAX_LENGTH = 200


def normal_student_id(given: str) -> str:
    """The id's normal form; ValueError (its message says why, for a person) if it has none."""
    if given.startswith(LTI_STUDENTS):
        return given
    hidden = sorted({f"U+{ord(char):04X}" for char in given if is_invisible(char)})
    if hidden:
        raise ValueError(
            f"a student id may not hold invisible or control characters ({', '.join(hidden)})"
        )
    compatible = unicodedata.normalize("NFKC", given)
    normal = " ".join(unicodedata.normalize("NFKC", compatible.casefold()).split())
    if not normal:
        raise ValueError("a student id may not be blank")
    if len(normal) > MAX_LENGTH:
        raise ValueError(f"a student id is at most {MAX_LENGTH} characters")
    return normal


def comparable(stored: str) -> str:
    """A stored id in normal form, or as it is where it has none (one stored before ids were
    normalised, with an invisible character)."""
    try:
        return normal_student_id(stored)
    except ValueError:
        return stored


# A student id where the API takes one (a body's field, a query, a path): its normal form, or
# a 422 that says why there is none.
StudentId = Annotated[
    str, Field(min_length=1, max_length=MAX_LENGTH), AfterValidator(normal_student_id)
]
