"""An exercise's known mistakes, code → message, as its reference declares them: what the
course's figures name a misconception by, and what the demo course's students get wrong.

Read from the reference module (its VARIANTS and weight probe) loaded as grading loads it,
never run; once per exercise version, since loading imports torch.
"""

from __future__ import annotations

import threading

from grader.diagnosis import WEIGHTS_CODE
from grader.errors import ExerciseDefinitionError
from grader.spec import Exercise

_known: dict[tuple[str, str], dict[str, str]] = {}
_lock = threading.Lock()


def known_mistakes(exercise: Exercise) -> dict[str, str]:
    """Code → message, in the reference's order (a code declared twice once); empty when the
    reference does not load (its figures then name each mistake by its code)."""
    key = (exercise.spec.slug, exercise.version)
    with _lock:
        found = _known.get(key)
    if found is None:
        found = _read(exercise)
        with _lock:
            _known[key] = found
    return dict(found)


def _read(exercise: Exercise) -> dict[str, str]:
    # Imported here: grader.reference imports torch, which a process that never asks for a
    # course's figures (a worker, `--help`) must not pay for.
    from grader.reference import Reference  # noqa: PLC0415

    try:
        reference = Reference.load(exercise)
    except ExerciseDefinitionError:
        return {}
    mistakes: dict[str, str] = {}
    for variant in reference.variants:
        mistakes.setdefault(variant.code, variant.message)
    if reference.weight_probe is not None:
        mistakes.setdefault(WEIGHTS_CODE, reference.weight_probe.message)
    return mistakes
