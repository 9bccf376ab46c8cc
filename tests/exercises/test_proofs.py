"""Every exercise of the catalog proves itself (`autograder check-exercise --all`): its solutions
pass with full marks, its starter fails, each of its mistakes fails a visible test with the
diagnosis it declares, and its hidden tests keep its promises; all through the real sandbox.

The catalog is graded once, by one proof; the other tests here read that proof's reports rather
than grade the same files again.
"""

from __future__ import annotations

import pytest

from grader.catalog import Catalog
from grader.proof import Proof, diagnosed
from grader.proof_cli import prove_catalog, render_proof
from grader.proof_warnings import lenient_hidden_tests
from grader.report import Report, ReportStatus, TestStatus
from grader.settings import GraderSettings
from grader.trainability import TRAINABILITY_CODES

pytestmark = pytest.mark.slow

CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)
SEED_EXERCISE = "multi-headed-self-attention"
ATTENTION_FUNCTION = "scaled-dot-product-attention"


@pytest.fixture(scope="module")
def proofs() -> dict[str, Proof]:
    return {proof.exercise.spec.slug: proof for proof in prove_catalog(CATALOG, slots=2)}


def mistake_report(proof: Proof, name: str) -> Report:
    return next(report for mistake, report in proof.mistakes if mistake.name == name)


@pytest.mark.parametrize("slug", CATALOG.slugs())
def test_the_exercise_proves_itself(proofs: dict[str, Proof], slug: str) -> None:
    assert proofs[slug].holds, render_proof(proofs[slug])


def test_no_hidden_test_gives_points_to_a_mistake_every_visible_test_catches(
    proofs: dict[str, Proof],
) -> None:
    """Only the tests of promised cases where the mistake is no mistake (one head: mixing or
    concatenating the heads changes nothing). A test of one token did, for every mistake of the
    attention itself."""
    lenient = {
        (slug, test): names
        for slug, proof in proofs.items()
        for test, names in lenient_hidden_tests(proof.exercise.spec.tests, proof.mistakes).items()
    }
    assert lenient == {
        # One target, none ignored: the sum is the mean, every target is a kept one, and the
        # row and column of a (1, C) logits' target are one value.
        ("cross-entropy", "a single target, none ignored"): [
            "mean_over_every_target",
            "sum_not_mean",
            "targets_indexed_as_columns",
        ],
        ("cross-entropy", "no target ignored"): ["mean_over_every_target"],
        # With an expansion of 1 the hidden size is d_model: no expansion is no mistake.
        ("feed-forward", "batch 1, expansion 1"): ["no_expansion"],
        ("fused-qkv-attention", "one head, causal mask"): ["block_qkv_layout", "heads_mixed"],
        # With one feature every x - mean is 0: where eps goes cannot change the output.
        ("layer-norm", "one feature"): ["eps_added_to_std"],
        (SEED_EXERCISE, "one head"): ["concat_along_sequence", "full_size_heads"],
        ("numpy-multi-head-attention", "one head"): ["concat_along_batch"],
    }


def test_a_missing_mask_also_breaks_the_causality_property(proofs: dict[str, Proof]) -> None:
    report = mistake_report(proofs[SEED_EXERCISE], "no_causal_mask")
    properties = {check.name: check.status.value for check in report.properties}
    assert properties["causal"] == "failed"
    assert properties["batch_independent"] == "passed"


def test_a_mask_reshaped_for_4d_inputs_fails_the_3d_tests_with_a_mask(
    proofs: dict[str, Proof],
) -> None:
    # Passed every test before any test combined a 3-D input with the mask.
    report = mistake_report(proofs[ATTENTION_FUNCTION], "mask_reshaped_for_heads")
    failed = {test.name for test in report.tests if test.status is not TestStatus.PASSED}
    assert failed == {
        "no heads axis, causal mask",
        "batch 1, no heads axis, values of size 3, causal mask",
    }


def test_a_crashing_submission_reports_the_exception(proofs: dict[str, Proof]) -> None:
    first = mistake_report(proofs[SEED_EXERCISE], "float_head_size").tests[0]
    assert first.status is TestStatus.ERROR
    assert first.message.startswith("raised TypeError")


def test_the_forbidden_builtin_is_rejected_with_its_line(proofs: dict[str, Proof]) -> None:
    report = mistake_report(proofs[SEED_EXERCISE], "uses_builtin_attention")
    assert report.status is ReportStatus.REJECTED
    assert "MultiheadAttention" in report.diagnosis[0].message
    assert report.diagnosis[0].line == 8


# Correct code that a trainability check could mistake for broken code: each passes with no
# finding in the proof above; listed here so that the corpus cannot quietly shrink.
TRICKY_BUT_CORRECT = {
    "adamw-training-step": [
        "lazy_optimizer_first_step",
        "log_softmax_buffers_einsum",
        "optimizer_subclass_data",
    ],
    "cross-entropy": [
        "custom_function_softmax_backward",
        "detached_max_arange_index",
        "one_hot_masked_where",
    ],
    "feed-forward": [
        "custom_gelu_function",
        "einsum_weights_no_grad_stats",
        "sequential_sharing_named_layers",
    ],
    "fused-qkv-attention": ["logsumexp_softmax", "masked_fill_minus_1e9"],
    "gpt-forward": [
        "einsum_functional_head",
        "handmade_layernorm_params",
        "nanogpt_tied_lm_head",
    ],
    "layer-norm": [
        "centering_matrix_einsum",
        "custom_autograd_function",
        "helper_function_reset_parameters",
        "rows_loop_no_grad_stats",
    ],
    "pre-norm-transformer-block": [
        "einsum_finfo_min_mask",
        "functional_forward_additive_padding",
        "head_loop_sliced_weights_erf",
        "nanogpt_tril_buffer",
        "notebook_prints_no_grad_attention_map",
        "tanh_gelu_by_hand",
    ],
    "multi-head-attention": ["buffer_scale_manual_softmax", "reset_parameters_under_no_grad"],
    SEED_EXERCISE: [
        "detached_attention_cache",
        "max_subtracted_manual_softmax",
        "nanogpt_tril_buffer",
        "setattr_getattr_heads",
    ],
    "multi-headed-self-attention-projection": [
        "handmade_parameter_projection",
        "no_grad_debug_print",
        "setattr_heads_einsum_projection",
    ],
    "positional-encoding": [
        "numpy_table_plain_attribute",
        "one_hot_matmul_table_in_forward",
        "python_loops_notebook",
    ],
    ATTENTION_FUNCTION: [
        "custom_function_softmax",
        "logsumexp_softmax",
        "mask_helper_under_no_grad",
    ],
    "kv-cache-generation": [
        "inference_mode_buffers_masked_fill",
        "nanogpt_tril_buffer_no_grad",
        "preallocated_cache_slices",
    ],
    "torch-multihead-parity": [
        "einsum_max_subtracted_softmax",
        "handmade_parameters_reset_under_no_grad",
    ],
}


def test_the_trainability_mutation_suite_is_caught_and_named(proofs: dict[str, Proof]) -> None:
    """Every mistake declared with a trainability code, across the torch exercises: at least 20,
    every code among them, at least 95% named exactly (the proof asks for all)."""
    graded = [
        (mistake.spec.diagnosis, diagnosed(report))
        for proof in proofs.values()
        for mistake, report in proof.mistakes
        if mistake.spec.diagnosis in TRAINABILITY_CODES
    ]
    named = sum(got == [declared] for declared, got in graded)
    assert len(graded) >= 20
    assert {declared for declared, _ in graded} == TRAINABILITY_CODES
    assert named >= 0.95 * len(graded), graded


@pytest.mark.parametrize(
    ("slug", "name"), [(slug, name) for slug, names in TRICKY_BUT_CORRECT.items() for name in names]
)
def test_tricky_but_correct_code_trains_unflagged(
    proofs: dict[str, Proof], slug: str, name: str
) -> None:
    """The proof graded the file as a solution: full marks and no finding, or a problem
    naming it."""
    path = CATALOG.get(slug).folder / "solutions" / f"{name}.py"
    assert path.is_file()
    assert not [problem for problem in proofs[slug].problems if f"/solutions/{name}.py" in problem]
