"""The exercises' folders and their trusted references.

Every exercise folder must validate; every reference must agree with a computation written
independently of it (the built-in it imitates, another framework, an einsum formulation, the
seed's own code); every known-wrong variant must change the output of every visible test (a
mistake with the mask, of every visible test that passes one), so that diagnosis can name it,
and differ from every other variant. References and variants run through `run_call`, exactly
as the grader runs them.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import sys
import types
import zlib
from collections.abc import Callable, Iterator
from functools import cache
from importlib import import_module
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
from oracles import Arrays, Parameters, attention, every_oracle
from oracles.attention import ROUNDED
from torch import nn

from grader.call_execution import run_call
from grader.catalog import Catalog
from grader.compare import agree
from grader.contract import Job, Policy
from grader.input_specs import CausalMask, KeepPrefix, RandomTensor, SameAs
from grader.inputs import make_call_inputs
from grader.spec import (
    Exercise,
    Mode,
    TestCaseSpec,
    Visibility,
    WeightSource,
    load_exercise,
)
from grader.test_calls import build_call, entry_point, output_names
from grader.variants import WeightProbe, WrongVariant

EXERCISES_DIR = Path(__file__).resolve().parents[2] / "exercises"
ORACLES = every_oracle()
# Every exercise of the catalog, however many: a new one is held to all of the below.
SLUGS = tuple(Catalog.from_folder(EXERCISES_DIR).slugs())

# The attention exercises: every test attends over two keys or more.
ATTENTION = set(attention.ORACLES)


# --- Building calls as the grader does ----------------------------------------------------


@cache
def exercise(slug: str) -> Exercise:
    return load_exercise(EXERCISES_DIR / slug)


def reference_module(slug: str) -> ModuleType:
    return import_module(exercise(slug).spec.reference)


def seed_of(test: TestCaseSpec) -> int:
    """The visible test's seed; a fixed stand-in for a hidden test's secret-derived one."""
    return test.seed if test.seed is not None else zlib.crc32(test.name.encode())


def draw_parameters(slug: str, test: TestCaseSpec, seed: int) -> Parameters:
    """Every parameter of the reference, uniform in ±1/sqrt(last dim), biases non-zero: for
    the main entry point, where the exercise's weights are the grader's."""
    spec = exercise(slug).spec
    if spec.weights is not WeightSource.GRADER or test.entry is not None:
        return {}
    entry = getattr(reference_module(slug), spec.entry_point)
    with torch.random.fork_rng():
        module = entry(**test.init)
    generator = torch.Generator().manual_seed(seed + 1)
    drawn = {}
    for name, parameter in module.named_parameters():
        bound = 1.0 / math.sqrt(parameter.shape[-1])
        values = torch.rand(parameter.shape, generator=generator) * 2 - 1
        drawn[name] = (values * bound).numpy()
    return drawn


def run(
    slug: str,
    entry: object,
    test: TestCaseSpec,
    parameters: Parameters | None = None,
    *,
    strict: bool = True,
) -> Arrays:
    """Call `entry` on the test as the grader would; return its outputs as arrays."""
    spec = exercise(slug).spec
    seed = seed_of(test)
    loaded = draw_parameters(slug, test, seed) if parameters is None else parameters
    call = build_call(spec, test, make_call_inputs(test, seed), loaded or None)
    call = dataclasses.replace(call, strict_parameters=strict)
    job = Job(
        source="",
        entry_point=spec.entry_point,
        kind=spec.kind.value,
        framework=spec.framework.value,
        policy=Policy(allowed_imports=tuple(spec.allowed_imports), forbidden=tuple(spec.forbidden)),
        calls=(call,),
        limits=spec.limits.to_limits(),
        outputs=tuple(spec.outputs),
    )
    outputs, _ = run_call(entry, call, job)
    arrays = tuple(output.array for output in outputs)
    assert all(array is not None for array in arrays), outputs
    return tuple(array for array in arrays if array is not None)


@cache
def reference_outputs(slug: str, test_name: str) -> Arrays:
    test = exercise(slug).spec.test(test_name)
    return run(slug, getattr(reference_module(slug), entry_point(exercise(slug).spec, test)), test)


@cache
def variant_outputs(slug: str, index: int, test_name: str) -> Arrays:
    """The outputs of the slug's `index`-th variant (several variants may share a code)."""
    return run(slug, variants(slug)[index].entry, exercise(slug).spec.test(test_name))


def variants(slug: str) -> tuple[WrongVariant, ...]:
    found: tuple[WrongVariant, ...] = getattr(reference_module(slug), "VARIANTS", ())
    return found


def variant_indices(slug: str, code: str) -> list[int]:
    return [index for index, wrong in enumerate(variants(slug)) if wrong.code == code]


def all_agree(actual: Arrays, expected: Arrays) -> bool:
    return len(actual) == len(expected) and all(map(agree, actual, expected))


def visible_tests(slug: str) -> list[TestCaseSpec]:
    return [t for t in exercise(slug).spec.tests if t.visibility is Visibility.VISIBLE]


def every_test() -> Iterator[tuple[str, str]]:
    for slug in SLUGS:
        for test in exercise(slug).spec.tests:
            yield slug, test.name


# --- The exercise folders ------------------------------------------------------------------


def test_every_exercise_has_an_independent_computation() -> None:
    """Each reference is checked against an oracle of its own, below: add one for a new
    exercise."""
    assert set(SLUGS) == set(ORACLES), "add the missing exercises' oracles to ORACLES"


@pytest.mark.parametrize("slug", SLUGS)
def test_exercise_folder_is_valid(slug: str) -> None:
    spec = exercise(slug).spec
    assert spec.slug == slug
    assert callable(getattr(reference_module(slug), spec.entry_point))
    visibilities = [test.visibility for test in spec.tests]
    assert visibilities.count(Visibility.VISIBLE) >= 4
    assert visibilities.count(Visibility.HIDDEN) >= 4


def _torchtyping_stand_in() -> types.ModuleType:
    """torchtyping as the sandbox provides it, for annotations only: `TensorType[...]` is
    torch.Tensor. The package itself is not installed."""

    class TensorType:
        def __class_getitem__(cls, _dimensions: object) -> type[torch.Tensor]:
            return torch.Tensor

    module = types.ModuleType("torchtyping")
    vars(module)["TensorType"] = TensorType
    return module


@pytest.fixture
def torchtyping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torchtyping", _torchtyping_stand_in())


@pytest.mark.usefixtures("torchtyping")
@pytest.mark.parametrize("slug", SLUGS)
def test_starter_compiles_and_defines_the_entry_point(slug: str) -> None:
    found = exercise(slug)
    namespace: dict[str, object] = {}
    exec(compile(found.starter, f"{slug}/starter.py", "exec"), namespace)
    assert callable(namespace[found.spec.entry_point])


# The input that holds the keys, where it is not the first.
KEYS_INPUT = {"scaled-dot-product-attention": 1, "torch-multihead-parity": 1}


def shape_of(test: TestCaseSpec, position: int) -> tuple[int, ...]:
    spec = test.inputs[position]
    while isinstance(spec, SameAs):
        spec = test.inputs[spec.same_as]
    assert isinstance(spec, RandomTensor)
    return spec.shape


@pytest.mark.parametrize("slug", sorted(ATTENTION))
def test_tests_span_batch_1_and_every_test_attends_over_two_keys_or_more(slug: str) -> None:
    """Over one key the softmax is 1: a test of one token passes code with no attention."""
    tests = exercise(slug).spec.tests
    assert any(shape_of(test, 0)[0] == 1 for test in tests)
    assert all(shape_of(test, KEYS_INPUT.get(slug, 0))[-2] >= 2 for test in tests)


# --- Each reference against an independent computation -------------------------------------


@pytest.mark.parametrize(("slug", "test_name"), list(every_test()))
def test_reference_matches_an_independent_computation(slug: str, test_name: str) -> None:
    spec = exercise(slug).spec
    test = spec.test(test_name)
    seed = seed_of(test)
    inputs, parameters = make_call_inputs(test, seed), draw_parameters(slug, test, seed)
    expected = ORACLES[slug](test, inputs, parameters)
    actual = reference_outputs(slug, test_name)
    assert len(actual) == len(expected) == len(output_names(spec, test))
    for got, want in zip(actual, expected, strict=True):
        assert got.shape == want.shape
        if slug in ROUNDED:  # both sides rounded to 4 decimals
            assert agree(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("slug", "test_name"), list(every_test()))
def test_reference_output_dtype_follows_the_inputs(slug: str, test_name: str) -> None:
    """A float output has the dtype of the drawn float inputs, where there are some."""
    test = exercise(slug).spec.test(test_name)
    dtypes = {
        spec.dtype for call in test.calls for spec in call.inputs if isinstance(spec, RandomTensor)
    }
    floats = [out for out in reference_outputs(slug, test_name) if out.dtype.kind == "f"]
    if len(dtypes) == 1:
        assert {str(out.dtype) for out in floats} <= dtypes


# --- Known-wrong variants ------------------------------------------------------------------


def passes_a_mask(test: TestCaseSpec) -> bool:
    return any(isinstance(spec, CausalMask | KeepPrefix) for spec in test.inputs)


def in_train_mode(test: TestCaseSpec) -> bool:
    return test.mode is Mode.TRAIN


def is_a_sequence(test: TestCaseSpec) -> bool:
    return bool(test.steps)


# A training step's and a cache's mistakes: a single forward call never runs the code they are in.
_TRAIN_STEP_MISTAKES = (
    "adam-l2-weight-decay", "clipping-not-applied", "clip-per-parameter",
    "grad-norm-after-clipping", "no-bias-correction", "gradients-accumulate",
    "optimizer-state-reset", "loss-summed",
)  # fmt: skip
_CACHE_MISTAKES = (
    "cache-not-used", "cache-not-appended", "positions-restart", "decode-mask-misaligned",
    "cache-kept-across-prefill", "positions-not-reset",
)  # fmt: skip

# Mistakes that only some tests can show: in handling the optional mask (a test that passes
# none), in where dropout goes or how much it keeps (an eval-mode test, where it does nothing),
# dropout left on in eval mode (a train-mode test, where it belongs), and those of the code only
# a sequence of calls runs.
SHOWN_ONLY_WHERE: dict[tuple[str, str], Callable[[TestCaseSpec], bool]] = {
    ("scaled-dot-product-attention", "boolean-keep-mask"): passes_a_mask,
    ("pre-norm-transformer-block", "keep-mask-ignored"): passes_a_mask,
    ("pre-norm-transformer-block", "keep-on-queries"): passes_a_mask,
    ("fused-qkv-attention", "boolean-keep-mask"): passes_a_mask,
    ("fused-qkv-attention", "mask-ignored"): passes_a_mask,
    ("feed-forward", "dropout-misplaced"): in_train_mode,
    ("feed-forward", "keep-probability"): in_train_mode,
    ("feed-forward", "dropout-in-eval"): lambda test: not in_train_mode(test),
    **{("adamw-training-step", code): is_a_sequence for code in _TRAIN_STEP_MISTAKES},
    **{("kv-cache-generation", code): is_a_sequence for code in _CACHE_MISTAKES},
}


def variant_cases(*, showing: bool = True) -> Iterator[tuple[str, int, str]]:
    """(slug, variant index, visible test) for every test that can show the variant's mistake,
    or, with showing=False, for every test that cannot."""
    for slug in SLUGS:
        found = enumerate(variants(slug))
        for (index, wrong), test in itertools.product(found, visible_tests(slug)):
            if test.entry != wrong.of:
                continue
            shows = SHOWN_ONLY_WHERE.get((slug, wrong.code))
            if (shows is None or shows(test)) is showing:
                yield slug, index, test.name


def test_the_exercises_know_their_common_mistakes() -> None:
    codes = {v.code for v in variants("multi-headed-self-attention")}
    assert codes >= {
        "missing-scaling",
        "no-causal-mask",
        "full-size-heads",
        "concat-along-sequence",
        "softmax-over-queries",
        "rounded-to-2-decimals",
        "rounded-to-3-decimals",
        "extra-output-projection",
    }
    assert {v.code for v in variants("multi-headed-self-attention-projection")} >= {
        "missing-scaling",
        "no-causal-mask",
        "softmax-over-queries",
        "rounded-to-2-decimals",
        "projection-with-bias",
        "projection-before-heads",
        "no-output-projection",
    }
    assert {v.code for v in variants("fused-qkv-attention")} >= {"heads-mixed", "missing-scaling"}
    assert "boolean-keep-mask" in {v.code for v in variants("scaled-dot-product-attention")}


@pytest.mark.parametrize(("slug", "index", "test_name"), list(variant_cases()))
def test_variant_changes_every_visible_output(slug: str, index: int, test_name: str) -> None:
    outputs = variant_outputs(slug, index, test_name)
    assert not all_agree(outputs, reference_outputs(slug, test_name)), variants(slug)[index].code


@pytest.mark.parametrize(("slug", "index", "test_name"), list(variant_cases(showing=False)))
def test_a_mistake_changes_nothing_where_it_cannot_show(
    slug: str, index: int, test_name: str
) -> None:
    """Why SHOWN_ONLY_WHERE skips some tests: there the mistake is the reference itself, so a
    submission making it passes those tests and is never diagnosed on them."""
    assert all_agree(variant_outputs(slug, index, test_name), reference_outputs(slug, test_name))


@pytest.mark.parametrize("slug", [slug for slug in SLUGS if variants(slug)])
def test_variants_are_told_apart_by_the_visible_tests(slug: str) -> None:
    """Every two variants differ on some visible test. Variants may share a code, for one
    mistake written two ways: the diagnosis is then one, with one message."""
    found = variants(slug)
    for first, second in itertools.combinations(range(len(found)), 2):
        if found[first].of != found[second].of:  # variants of two entry points
            continue
        assert any(
            not all_agree(
                variant_outputs(slug, first, test.name), variant_outputs(slug, second, test.name)
            )
            for test in visible_tests(slug)
            if test.entry == found[first].of
        ), (found[first].code, found[second].code)
    for code in {wrong.code for wrong in found}:
        assert len({found[index].message for index in variant_indices(slug, code)}) == 1, code


@pytest.mark.parametrize("slug", SLUGS)
def test_variant_messages_are_sentences(slug: str) -> None:
    for wrong in variants(slug):
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", wrong.code)
        assert wrong.message.startswith("Your ") and wrong.message.endswith(".")


# --- The seed exercise and its newer version with a projection ------------------------------

SEED_SLUG = "multi-headed-self-attention"
PROJECTION_SLUG = "multi-headed-self-attention-projection"


def test_an_extra_projection_is_recognised_with_or_without_a_bias() -> None:
    """In the seed exercise, `extra-output-projection` names a projection with a bias and one
    without, which is NeetCode's newer version: the projection exercise's reference."""
    extra = variant_indices(SEED_SLUG, "extra-output-projection")
    assert len(extra) == 2
    newer = reference_module(PROJECTION_SLUG).MultiHeadedSelfAttention
    for test in visible_tests(SEED_SLUG):
        expected = run(SEED_SLUG, newer, test)
        outputs = [variant_outputs(SEED_SLUG, index, test.name) for index in extra]
        assert [all_agree(output, expected) for output in outputs].count(True) == 1
    assert PROJECTION_SLUG in variants(SEED_SLUG)[extra[0]].message


def test_no_projection_is_the_seed_exercise() -> None:
    (index,) = variant_indices(PROJECTION_SLUG, "no-output-projection")
    for test in visible_tests(PROJECTION_SLUG):
        seed = run(PROJECTION_SLUG, reference_module(SEED_SLUG).MultiHeadedSelfAttention, test)
        assert all_agree(variant_outputs(PROJECTION_SLUG, index, test.name), seed)
    assert f"`{SEED_SLUG}`" in variants(PROJECTION_SLUG)[index].message


# Both exercises probe the heads' weights, which are alike in both.
PROBED = (SEED_SLUG, PROJECTION_SLUG)


def weight_probe(slug: str) -> WeightProbe:
    probe: WeightProbe = reference_module(slug).WEIGHT_PROBE
    return probe


@pytest.mark.parametrize(
    ("slug", "test_name"), [(slug, name) for slug, name in every_test() if slug in PROBED]
)
def test_weight_probe_gives_the_head_weights(slug: str, test_name: str) -> None:
    init = exercise(slug).spec.test(test_name).init
    parameters = weight_probe(slug).parameters(dict(init))
    head_shape = (int(init["attention_dim"]) // int(init["num_heads"]), int(init["embedding_dim"]))
    assert {name: value.shape for name, value in parameters.items()} == {
        "key_gen.weight": head_shape,
        "query_gen.weight": head_shape,
        "value_gen.weight": head_shape,
    }


@pytest.mark.parametrize("slug", PROBED)
def test_weight_probe_leaves_the_global_rng_alone(slug: str) -> None:
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    weight_probe(slug).parameters({"embedding_dim": 4, "attention_dim": 4, "num_heads": 2})
    assert torch.equal(torch.rand(3), expected)


class _QueryFirst(nn.Module):
    """A student's right math with its own head that creates the query before the key."""

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super().__init__()
        self.heads = nn.ModuleList(
            self._Head(embedding_dim, attention_dim // num_heads) for _ in range(num_heads)
        )

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        concatenated = torch.cat([head(embedded) for head in self.heads], dim=-1)
        return torch.round(self.project(concatenated), decimals=4)

    def project(self, concatenated: torch.Tensor) -> torch.Tensor:
        return concatenated

    class _Head(nn.Module):
        def __init__(self, embedding_dim: int, head_size: int) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.query_gen = nn.Linear(embedding_dim, head_size, bias=False)
            self.key_gen = nn.Linear(embedding_dim, head_size, bias=False)
            self.value_gen = nn.Linear(embedding_dim, head_size, bias=False)

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            q, k = self.query_gen(embedded), self.key_gen(embedded)
            scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)
            T = scores.shape[-1]
            scores = scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
            result: torch.Tensor = scores.softmax(dim=-1) @ self.value_gen(embedded)
            return result


class _QueryFirstProjected(_QueryFirst):
    """The same heads, then the newer version's projection: its weights are still right, since
    the heads draw as many numbers from the generator in any order."""

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int) -> None:
        super().__init__(embedding_dim, attention_dim, num_heads)
        self.output = nn.Linear(attention_dim, attention_dim, bias=False)

    def project(self, concatenated: torch.Tensor) -> torch.Tensor:
        projected: torch.Tensor = self.output(concatenated)
        return projected


QUERY_FIRST = {SEED_SLUG: _QueryFirst, PROJECTION_SLUG: _QueryFirstProjected}


@pytest.mark.parametrize(
    ("slug", "test_name"), [(slug, test.name) for slug in PROBED for test in visible_tests(slug)]
)
def test_weight_probe_explains_layers_created_in_another_order(slug: str, test_name: str) -> None:
    test = exercise(slug).spec.test(test_name)
    expected = reference_outputs(slug, test_name)
    assert not all_agree(run(slug, QUERY_FIRST[slug], test), expected)
    probe = weight_probe(slug).parameters(dict(test.init))
    assert all_agree(run(slug, QUERY_FIRST[slug], test, probe, strict=False), expected)


# --- The statements' worked examples -------------------------------------------------------


def _shown(values: torch.Tensor) -> str:
    """The numbers as the statement prints them, to 4 decimals, whitespace collapsed."""
    return ", ".join(f"{value:.4f}" for value in values.flatten().tolist())


def _statement(slug: str) -> str:
    return re.sub(r"\s+", " ", exercise(slug).statement)


@pytest.mark.parametrize("slug", [SEED_SLUG, PROJECTION_SLUG])
def test_worked_example_of_multi_headed_self_attention(slug: str) -> None:
    entry = reference_module(slug).MultiHeadedSelfAttention
    x = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]])
    with torch.random.fork_rng(), torch.no_grad():
        model = entry(embedding_dim=3, attention_dim=4, num_heads=2)
        output = model(x)
    assert output.shape == (1, 3, 4)
    for row in output[0]:
        assert _shown(row) in _statement(slug)
    # The hand check: the first token's output is its value vector, in every head.
    first_value = model.heads[0].value_gen.weight[:, 0]
    assert _shown(first_value) in _statement(slug)
    if slug == PROJECTION_SLUG:  # ... then projected: the first row of W^O gives output[0, 0, 0]
        assert _shown(model.proj.weight[0]) in _statement(slug)


def test_worked_example_of_torch_multihead_parity() -> None:
    slug = "torch-multihead-parity"
    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(0)
        builtin = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
        x = torch.rand(1, 4, 8)
        mine = reference_module(slug).MultiheadAttentionFromScratch(8, 2)
        mine.load_state_dict(builtin.state_dict())
        output, weights = mine(x, x, x)
    for row in (*output[0], *weights[0]):
        assert _shown(row) in _statement(slug)
    # The numbers printed in the seed notebook, with the seed's own nn.MultiheadAttention.
    assert _shown(weights[0, 0]) == "0.2563, 0.2470, 0.2437, 0.2530"
    assert _shown(output[0, 0, :3]) == "0.0371, -0.0003, 0.0308"


def test_worked_example_of_numpy_multi_head_attention() -> None:
    slug = "numpy-multi-head-attention"
    x = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    w = np.array([[[1.0], [0.0]], [[0.0], [1.0]]])
    output = reference_module(slug).multi_head_attention(x, w, w, w, np.eye(2))
    sigmoid_1 = math.e / (math.e + 1)
    np.testing.assert_allclose(output, [[[sigmoid_1, 0.5], [0.5, sigmoid_1]]])
    assert f"{sigmoid_1:.4f}, 0.5 ], [0.5 , {sigmoid_1:.4f}" in _statement(slug)


def test_worked_example_of_scaled_dot_product_attention() -> None:
    slug = "scaled-dot-product-attention"
    function = reference_module(slug).scaled_dot_product
    q = k = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    v = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    causal = torch.tensor([[0.0, float("-inf")], [0.0, 0.0]])
    for mask in (None, causal):
        values, attention = function(q, k, v, mask)
        for row in (*attention[0], *values[0]):
            assert _shown(row) in _statement(slug)
