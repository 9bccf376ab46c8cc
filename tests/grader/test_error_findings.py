"""Errors every beginner meets are named once, from the visible tests: each written as a student
writes it, into a correct solution of the multi-headed exercise. (The grader's own contract
errors, parameters laid out otherwise, are named on feed-forward's and gpt-forward's mistakes/
files, which the exercises' proofs grade.)"""

from __future__ import annotations

import pytest

from grader.catalog import Catalog
from grader.report import Report, ReportStatus
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.settings import GraderSettings

SLUG = "multi-headed-self-attention"
CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)
SOLUTION = (CATALOG.get(SLUG).folder / "solutions" / "batched_view_transpose.py").read_text()
MERGE = "y = y.transpose(1, 2).contiguous().view(B, T, H * hs).contiguous()"


def grade(source: str) -> Report:
    return Grader(CATALOG, InProcessSandbox(), "test-secret").grade(SLUG, source)


def written(old: str, new: str) -> str:
    assert old in SOLUTION
    return SOLUTION.replace(old, new)


@pytest.mark.parametrize(
    ("source", "code"),
    [
        (written("attention_dim // num_heads", "attention_dim / num_heads"), "float-size"),
        (written(MERGE, "y = y.transpose(1, 2).view(B, T, H * hs)"), "view-of-transposed"),
        (written("q @ k.transpose(-2, -1)", "q @ k"), "matmul-sizes"),
        (written("torch.ones(T, T)", "torch.ones(T + 1, T + 1)"), "sizes-do-not-broadcast"),
        (written("F.softmax(att, dim=-1)", "F.softmax(att, dim=4)"), "axis-out-of-range"),
        (written("y = att @ v", "y = att.double() @ v"), "float64-mixed-in"),
        (written("view(B, T, H, hs)", "view(B, T, hs, hs)"), "reshape-sizes"),
    ],
)
def test_a_known_error_is_named_once_for_every_visible_test_that_raised_it(
    source: str, code: str
) -> None:
    report = grade(source)
    assert report.status is ReportStatus.FAILED
    named = [finding for finding in report.diagnosis if finding.code == code]
    assert len(named) == 1, report.diagnosis
    raised = [test.name for test in report.tests if test.message.startswith("raised")]
    contract = [test.name for test in report.tests if "does not fit" in test.message]
    assert named[0].tests == (raised or contract)
    assert named[0].concepts


def test_an_error_of_the_students_own_is_not_given_a_meaning() -> None:
    report = grade(written("B, T, C = embedded.shape", "raise ValueError('not done yet')"))
    assert [finding.code for finding in report.diagnosis] == []


def test_an_error_only_a_hidden_test_raises_is_never_named() -> None:
    # Context length 2 is a hidden test's alone: the visible ones all pass.
    broken = "if T == 2:\n            y = y.transpose(1, 2).view(B, T, H * hs)\n        "
    report = grade(written(MERGE, broken + MERGE))
    assert all(test.status == "passed" for test in report.tests if test.visibility == "visible")
    assert report.status is ReportStatus.FAILED
    assert report.diagnosis == []
