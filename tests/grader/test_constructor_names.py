"""The statement fixes the constructor's parameter names, as it fixes the class's: a constructor
that calls one otherwise is refused on every test with the name it has instead, through the
policy as a submission runs (the in-process sandbox)."""

from __future__ import annotations

import pytest

from grader.catalog import Catalog
from grader.report import TestStatus
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.settings import GraderSettings

SLUG = "multi-headed-self-attention"
CORRECT = (
    GraderSettings().exercises_dir / SLUG / "solutions" / "neetcode_common_answer.py"
).read_text()
SIGNATURE = "def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):"


@pytest.fixture(scope="module")
def grader() -> Grader:
    return Grader(Catalog.from_folder(GraderSettings().exercises_dir), InProcessSandbox(), "names")


def test_a_renamed_parameter_is_refused_with_the_name_it_has(grader: Grader) -> None:
    renamed = CORRECT.replace(SIGNATURE, SIGNATURE.replace("num_heads:", "nums_heads:"), 1)
    renamed = renamed.replace("range(num_heads)", "range(nums_heads)").replace(
        "attention_dim // num_heads", "attention_dim // nums_heads"
    )
    report = grader.grade(SLUG, renamed)
    assert {test.status for test in report.tests} == {TestStatus.ERROR, TestStatus.FAILED}
    first = report.tests[0]
    assert first.message == (
        "does not fit the exercise: the grader calls `MultiHeadedSelfAttention(embedding_dim=..., "
        "attention_dim=..., num_heads=...)`, by the names the statement gives, and your "
        "`__init__` has no parameter `num_heads`: did you name it `nums_heads`?"
    )


@pytest.mark.parametrize(
    "signature",
    [
        "def __init__(self, embedding_dim, attention_dim, num_heads=1, **extra):",
        "def __init__(self, *, embedding_dim, attention_dim, num_heads):",
    ],
)
def test_constructors_that_take_the_names_are_called(grader: Grader, signature: str) -> None:
    assert SIGNATURE in CORRECT
    report = grader.grade(SLUG, CORRECT.replace(SIGNATURE, signature, 1))
    assert report.score == report.max_score, report.message
