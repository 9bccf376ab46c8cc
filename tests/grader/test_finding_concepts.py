"""Every finding code any exercise can give is tagged with concepts of the vocabulary."""

import pytest

from grader.catalog import Catalog
from grader.concepts import CONCEPTS
from grader.diagnosis import WEIGHTS_CODE
from grader.error_findings import KNOWN_ERRORS
from grader.finding_concepts import concepts_of, known_codes, tagged
from grader.first_submission import STARTER_CODE
from grader.judge import NOT_ALLOWED_CODE
from grader.output_contract import RETURNS_NONE, WRONG_SHAPE, WRONG_TYPE
from grader.reference import Reference
from grader.report import Finding
from grader.settings import GraderSettings
from grader.trainability import TRAINABILITY_CODES

# The output contract's codes: any exercise gives them to a first submission.
OUTPUT_CONTRACT_CODES = {STARTER_CODE, RETURNS_NONE, WRONG_TYPE, WRONG_SHAPE}
KNOWN_ERROR_CODES = {known.code for known in KNOWN_ERRORS}


def exercise_codes() -> dict[str, list[str]]:
    """What every exercise of the catalog can diagnose, with the concepts each finding gets:
    its reference's variants (an exported one's own concepts, else its code's) and weight probe,
    and what every exercise can give."""
    codes = {NOT_ALLOWED_CODE, *TRAINABILITY_CODES, *OUTPUT_CONTRACT_CODES, *KNOWN_ERROR_CODES}
    concepts = {code: concepts_of(code) for code in codes}
    for exercise in Catalog.from_folder(GraderSettings().exercises_dir):
        reference = Reference.load(exercise)
        for variant in reference.variants:
            concepts[variant.code] = list(variant.concepts) or concepts_of(variant.code)
        if reference.weight_probe is not None:
            concepts[WEIGHTS_CODE] = concepts_of(WEIGHTS_CODE)
    return concepts


def test_every_code_an_exercise_can_give_has_concepts_of_the_vocabulary() -> None:
    given = exercise_codes()
    assert sorted(code for code, concepts in given.items() if not concepts) == []
    assert {concept for concepts in given.values() for concept in concepts} <= set(CONCEPTS)


def test_the_table_knows_no_code_that_no_exercise_gives() -> None:
    assert sorted(known_codes() - set(exercise_codes())) == []


@pytest.mark.parametrize("code", sorted(known_codes()))
def test_every_concept_of_a_code_is_in_the_vocabulary(code: str) -> None:
    concepts = concepts_of(code)
    assert concepts and set(concepts) <= set(CONCEPTS)
    assert len(set(concepts)) == len(concepts)


def test_a_finding_with_concepts_of_its_own_keeps_them() -> None:
    named = Finding(code="course-mistake-7", message="m", concepts=["masking"])
    known = Finding(code="missing-scaling", message="m")
    unknown = Finding(code="course-mistake-8", message="m")
    assert [f.concepts for f in tagged([named, known, unknown])] == [["masking"], ["scaling"], []]
