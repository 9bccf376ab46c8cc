"""Every finding code any exercise can give is tagged with concepts of the vocabulary."""

import pytest

from grader.catalog import Catalog
from grader.concepts import CONCEPTS
from grader.diagnosis import WEIGHTS_CODE
from grader.finding_concepts import concepts_of, known_codes, tagged
from grader.judge import NOT_ALLOWED_CODE
from grader.reference import Reference
from grader.report import Finding
from grader.settings import GraderSettings
from grader.trainability import TRAINABILITY_CODES

# The output contract's codes: any exercise gives them to a first submission.
OUTPUT_CONTRACT_CODES = {"starter-unchanged", "returns-none", "wrong-output-type"}
OUTPUT_CONTRACT_CODES |= {"wrong-output-shape"}


def exercise_codes() -> set[str]:
    """What every exercise of the catalog can diagnose: its reference's variants and weight
    probe, and what every exercise can give."""
    codes = {NOT_ALLOWED_CODE, *TRAINABILITY_CODES, *OUTPUT_CONTRACT_CODES}
    for exercise in Catalog.from_folder(GraderSettings().exercises_dir):
        reference = Reference.load(exercise)
        codes |= {variant.code for variant in reference.variants}
        if reference.weight_probe is not None:
            codes.add(WEIGHTS_CODE)
    return codes


def test_every_code_an_exercise_can_give_has_a_concept() -> None:
    untagged = sorted(code for code in exercise_codes() if not concepts_of(code))
    assert untagged == []


def test_the_table_knows_no_code_that_no_exercise_gives() -> None:
    assert sorted(known_codes() - exercise_codes()) == []


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
