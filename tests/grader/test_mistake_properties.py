"""A property that a diagnosed mistake breaks by itself fails without its generic hint, which
would contradict the diagnosis: "mask the scores above the diagonal" to a student who does, and
whose softmax runs over the queries."""

from __future__ import annotations

from grader_support import SLUG, plan

from grader.catalog import Catalog
from grader.plan_format import decode, encode
from grader.properties import PROPERTIES
from grader.report import PropertyCheck, PropertyStatus, Report
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.settings import GraderSettings
from grader.spec import Property

CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)
FOLDER = CATALOG.get(SLUG).folder
CAUSAL_HINT = PROPERTIES[Property.CAUSAL].hint


def grade(source: str) -> Report:
    return Grader(CATALOG, InProcessSandbox(), "test-secret").grade(SLUG, source)


def causal(report: Report) -> PropertyCheck:
    return next(check for check in report.properties if check.name == Property.CAUSAL.value)


def breaks(code: str) -> set[tuple[Property, ...]]:
    """What the known mistake of this code breaks made alone (not in a pair)."""
    return {
        mistake.breaks
        for mistake in plan().mistakes
        if mistake.code == code and mistake.partner is None
    }


def test_the_plan_knows_which_properties_each_known_mistake_breaks() -> None:
    assert breaks("softmax-over-queries") == {(Property.CAUSAL,)}
    assert breaks("no-causal-mask") == {(Property.CAUSAL,)}
    assert breaks("missing-scaling") == {()}


def test_a_cached_plan_keeps_what_its_mistakes_break() -> None:
    read = decode(plan().exercise, encode(plan()))
    assert [mistake.breaks for mistake in read.mistakes] == [
        mistake.breaks for mistake in plan().mistakes
    ]


def test_a_softmax_over_the_queries_is_not_told_to_mask_above_the_diagonal() -> None:
    source = (FOLDER / "mistakes" / "softmax_over_queries.py").read_text()
    report = grade(source)
    assert [finding.code for finding in report.diagnosis] == ["softmax-over-queries"]
    check = causal(report)
    assert check.status is PropertyStatus.FAILED
    assert CAUSAL_HINT not in check.message
    assert check.message.startswith("changing the last token changed the output at position 0")
    assert check.message.endswith(
        "which follows from the diagnosed mistake (softmax-over-queries): fix that first"
    )


def test_a_causality_break_no_known_mistake_explains_keeps_its_hint() -> None:
    """A mask one place off the diagonal: each token sees the next one too."""
    source = (FOLDER / "solutions" / "neetcode_common_answer.py").read_text()
    leaky = "torch.tril(torch.ones(context_length, context_length), diagonal=1)"
    source = source.replace("torch.tril(torch.ones(context_length, context_length))", leaky)
    assert leaky in source
    report = grade(source)
    assert report.diagnosis == []
    check = causal(report)
    assert check.status is PropertyStatus.FAILED
    assert check.message.endswith(CAUSAL_HINT)
