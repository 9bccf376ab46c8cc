"""Diagnosis by behaviour: a known mistake named in the forms students write it (each fill of a
mask mistake), two known mistakes made together named together, and never a name on evidence
a correct answer also gives. Submissions are run in this process (trusted code), as the grader
would run them, on the visible tests."""

from __future__ import annotations

import importlib.util
import math
import sys
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from grader.catalog import Catalog
from grader.contract import CallOutcome, OutputValue
from grader.diagnosis import PAIR_LEAD, diagnose
from grader.plan import ExercisePlan, TestPlan, make_job
from grader.plan_building import build_plan
from grader.plan_format import decode, encode
from grader.reference import run_trusted
from grader.settings import GraderSettings

ATTENTION = "scaled-dot-product-attention"
PROJECTION = "multi-headed-self-attention-projection"
# The exercises with a mask: every solution of theirs is checked.
CHANGED = (
    ATTENTION,
    "fused-qkv-attention",
    "multi-headed-self-attention",
    PROJECTION,
    "pre-norm-transformer-block",
    "gpt-forward",
)


@cache
def catalog() -> Catalog:
    return Catalog.from_folder(GraderSettings().exercises_dir)


@cache
def plan(slug: str) -> ExercisePlan:
    return build_plan(catalog().get(slug), secret="test-secret")


def visible(slug: str) -> list[TestPlan]:
    return [test for test in plan(slug).tests if test.visible]


def outcomes_of(slug: str, entry: object) -> dict[str, CallOutcome]:
    """What the grader would get from `entry` on each visible test."""
    spec = plan(slug).exercise.spec
    return {
        test.call.id: CallOutcome(
            test.call.id, outputs=run_trusted(entry, test.call, make_job(spec, "", (test.call,)))[0]
        )
        for test in visible(slug)
    }


def codes(slug: str, outcomes: dict[str, CallOutcome]) -> list[str]:
    """The diagnosis of every visible test taken as failing: the codes, in order."""
    return [finding.code for finding in diagnose(plan(slug), visible(slug), outcomes)]


def attention_filling(
    fill: float, *, scaled: bool = True
) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """Student code: scores.masked_fill(mask == 0, fill), the mask read as 1 = keep."""

    def scaled_dot_product(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        scores = q @ k.transpose(-2, -1)
        if scaled:
            scores = scores / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, fill)
        attention = F.softmax(scores, dim=-1)
        return attention @ v, attention

    return scaled_dot_product


@pytest.mark.parametrize("fill", [float("-inf"), -9e15, -1e9, -1e4, 1e-15, 1e-9, 0.0])
def test_the_keep_mask_mistake_is_named_whatever_its_fill(fill: float) -> None:
    assert codes(ATTENTION, outcomes_of(ATTENTION, attention_filling(fill))) == [
        "boolean-keep-mask"
    ]


@pytest.mark.parametrize("fill", ["float('-inf')", "-9e15", "1e-15"])
def test_a_causal_mask_the_wrong_way_round_is_named_whatever_its_fill(
    fill: str, tmp_path: Path
) -> None:
    """A module exercise's mask mistake: the seed's heads with the lower triangle hidden."""
    seed = "multi-headed-self-attention"
    written = catalog().get(seed).folder / "mistakes" / "mask_inverted_large_negative.py"
    student = tmp_path / "student.py"
    student.write_text(written.read_text().replace("-1e9", fill))
    assert codes(seed, outcomes_of(seed, _load(student).MultiHeadedSelfAttention)) == [
        "mask-inverted"
    ]


def test_a_large_negative_fill_is_named_on_the_rows_its_variant_leaves_undefined() -> None:
    """-9e15 makes the last query's row uniform where -inf makes it NaN: with the -inf form
    alone (the variant tried first), the rest of the output still names the mistake."""
    test = next(t for t in visible(ATTENTION) if len(t.call.args) == 4)
    outcome = outcomes_of(ATTENTION, attention_filling(-9e15))[test.call.id]
    nan_form = next(m for m in plan(ATTENTION).mistakes if m.code == "boolean-keep-mask")
    nan_outputs = nan_form.outputs[test.spec.name]
    assert nan_outputs is not None and np.isnan(_array(nan_outputs[0])).any()
    alone = ExercisePlan(plan(ATTENTION).exercise, (test,), (nan_form,))
    findings = diagnose(alone, [test], {test.call.id: outcome})
    assert [finding.code for finding in findings] == ["boolean-keep-mask"]


def test_an_output_right_wherever_the_variant_is_defined_is_never_named() -> None:
    """Wrong only where the -inf variant is NaN: a correct answer gives the same evidence
    there, so nothing is named (a match is never NaN alone)."""
    test = next(t for t in visible(ATTENTION) if len(t.call.args) == 4)
    nan_form = next(m for m in plan(ATTENTION).mistakes if m.code == "boolean-keep-mask")
    wrong = nan_form.outputs[test.spec.name]
    assert wrong is not None
    outputs = []
    for right, bad in zip(test.expected, wrong, strict=True):
        array = _array(right).copy()
        array[np.isnan(_array(bad))] = 0.5  # wrong, but only where the variant says nothing
        outputs.append(OutputValue(right.type_name, array, right.dtype, right.shape))
    outcomes = {test.call.id: CallOutcome(test.call.id, outputs=tuple(outputs))}
    assert diagnose(plan(ATTENTION), [test], outcomes) == []


def test_two_mistakes_at_once_are_named_together() -> None:
    """No scaling and the keep-mask reading with -1e9 (a fill as harmless as -inf elsewhere):
    a finding for each, saying that the two go together; the tests without a mask show the
    missing scaling alone."""
    findings = diagnose(
        plan(ATTENTION),
        visible(ATTENTION),
        outcomes_of(ATTENTION, attention_filling(-1e9, scaled=False)),
    )
    assert {finding.code for finding in findings} == {"missing-scaling", "boolean-keep-mask"}
    assert all(finding.message.startswith(PAIR_LEAD) for finding in findings)
    by_code = {finding.code: finding.tests for finding in findings}
    masked = [t.spec.name for t in visible(ATTENTION) if len(t.call.args) == 4]
    assert by_code["boolean-keep-mask"] == masked  # each test once, though two forms match
    assert by_code["missing-scaling"] == [t.spec.name for t in visible(ATTENTION)]


def test_classes_that_change_different_steps_pair_up_by_inheritance() -> None:
    """The projection exercise's head without the mask and its projection with a bias."""
    module = _load(catalog().get(PROJECTION).folder / "mistakes" / "projection_with_bias.py")
    assert codes(PROJECTION, outcomes_of(PROJECTION, module.MultiHeadedSelfAttention)) == [
        "projection-with-bias"
    ]  # one part alone: no pair claimed
    pairs = {(m.code, m.partner[0]) for m in plan(PROJECTION).mistakes if m.partner}
    assert ("no-causal-mask", "projection-with-bias") in pairs


def test_heads_with_one_mistake_each_make_a_head_with_both() -> None:
    """The seed's variants each replace the head class: a pair derives its head from both."""
    seed = "multi-headed-self-attention"
    pairs = {frozenset((m.code, m.partner[0])) for m in plan(seed).mistakes if m.partner}
    assert frozenset(("missing-scaling", "no-causal-mask")) in pairs
    # With no mask at all, which keys an inverted one would hide is moot: no-causal-mask alone.
    assert frozenset(("no-causal-mask", "mask-inverted")) not in pairs


def test_a_pair_is_never_one_of_its_parts_alone() -> None:
    """Two variants that change the same step (the scaling) don't pair: the pair would be one
    of them. Nor do two forms of one mistake."""
    pairs = {frozenset((m.code, m.partner[0])) for m in plan(ATTENTION).mistakes if m.partner}
    assert frozenset(("missing-scaling", "scaled-by-d-k")) not in pairs
    assert all(len(pair) == 2 for pair in pairs)
    assert frozenset(("missing-scaling", "boolean-keep-mask")) in pairs


def test_a_cached_plan_keeps_its_pairs() -> None:
    """A plan read back from the cache names the same pairs, so a cached grade diagnoses as a
    fresh one."""
    built = plan(ATTENTION)
    read = decode(built.exercise, encode(built))
    assert [(m.code, m.partner) for m in read.mistakes] == [
        (m.code, m.partner) for m in built.mistakes
    ]
    assert any(m.partner for m in read.mistakes)


@pytest.mark.parametrize(
    ("slug", "path"),
    [
        (slug, path)
        for slug in CHANGED
        for path in sorted((catalog().get(slug).folder / "solutions").glob("*.py"))
    ],
    ids=lambda value: value if isinstance(value, str) else value.stem,
)
def test_a_correct_solution_never_gets_a_diagnosis(
    slug: str, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even taken as failing every visible test, a correct file shows no known mistake."""
    monkeypatch.setitem(sys.modules, "torchtyping", _torchtyping())
    entry = getattr(_load(path), plan(slug).exercise.spec.entry_point)
    assert codes(slug, outcomes_of(slug, entry)) == []


def _array(output: OutputValue) -> np.ndarray:
    assert output.array is not None
    return output.array


def _torchtyping() -> types.ModuleType:
    """A stand-in for the annotations package some students import: TensorType[...] is a
    tensor."""

    class TensorType:
        def __class_getitem__(cls, _: object) -> type[torch.Tensor]:
            return torch.Tensor

    module = types.ModuleType("torchtyping")
    module.TensorType = TensorType  # type: ignore[attr-defined]
    module.patch_typeguard = lambda: None  # type: ignore[attr-defined]
    return module


def _load(path: Path) -> types.ModuleType:
    found = importlib.util.spec_from_file_location(f"_solution_{path.stem}", path)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module
