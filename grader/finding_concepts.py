"""The concepts (grader.concepts) each finding code is about, in one table keyed by code.

Keyed by code, not declared per variant: a code is shared across exercises ("missing-scaling"
in seven of them) and must mean the same concepts in each, so the figures of a concept add up
across the course. A finding made with concepts of its own (a course-level mistake that staff
named) keeps them; every other finding takes the table's.
"""

from __future__ import annotations

from collections.abc import Iterable

from grader.report import Finding

_CONCEPTS_OF_CODE: dict[str, tuple[str, ...]] = {
    # The entry point's contract, and the policy: what any exercise can answer.
    "not-allowed": ("allowed-apis",),
    "starter-unchanged": ("output-contract",),
    "returns-none": ("output-contract",),
    "wrong-output-type": ("output-contract",),
    "wrong-output-shape": ("output-contract",),
    "rounded-to-2-decimals": ("rounding",),
    "rounded-to-3-decimals": ("rounding",),
    # Attention: scores, masks, softmax, heads and the layers around them.
    "missing-scaling": ("scaling",),
    "scaled-by-d-k": ("scaling",),
    "no-causal-mask": ("masking",),
    "causal-mask": ("masking",),
    "boolean-keep-mask": ("masking",),
    "keep-mask-ignored": ("masking",),
    "mask-after-softmax": ("masking", "softmax-axis"),
    "decode-mask-misaligned": ("masking", "caching"),
    "mask-ignored": ("masking",),
    "mask-inverted": ("masking",),
    "keep-on-queries": ("masking",),
    "softmax-over-queries": ("softmax-axis",),
    "softmax-over-wrong-axis": ("softmax-axis",),
    "full-size-heads": ("head-split-merge",),
    "concat-along-sequence": ("head-split-merge",),
    "heads-mixed": ("head-split-merge",),
    "weights-stacked-last": ("head-split-merge", "output-contract"),
    "weights-per-head": ("head-split-merge", "output-contract"),
    "query-and-key-swapped": ("projections",),
    "block-qkv-layout": ("head-split-merge", "projections"),
    "extra-output-projection": ("projections",),
    "no-output-projection": ("projections",),
    "projection-with-bias": ("projections",),
    "projection-before-heads": ("projections", "weight-initialisation"),
    # The block around attention.
    "wrong-normalized-axis": ("normalisation",),
    "unbiased-variance": ("normalisation",),
    "mean-not-subtracted": ("normalisation",),
    "missing-eps": ("normalisation", "numerical-stability"),
    "eps-outside-root": ("normalisation", "numerical-stability"),
    "missing-affine": ("normalisation", "parameter-registration"),
    "missing-bias": ("normalisation",),
    "weight-bias-swapped": ("normalisation",),
    "post-norm": ("normalisation", "residual-connections"),
    "residual-around-norm": ("normalisation", "residual-connections"),
    "missing-attention-residual": ("residual-connections",),
    "missing-ffn-residual": ("residual-connections",),
    "relu-instead-of-gelu": ("activations",),
    "tanh-gelu": ("activations",),
    "dropout-misplaced": ("dropout",),
    "dropout-in-eval": ("dropout",),
    "keep-probability": ("dropout",),
    "positions-not-added": ("positions",),
    "positions-from-one": ("positions",),
    "concatenated-halves": ("positions",),
    "exponent-i-over-d": ("positions",),
    "missing-embedding-scale": ("positions",),
    "no-final-norm": ("normalisation",),
    "positions-restart": ("positions", "caching"),
    "positions-not-reset": ("positions", "caching"),
    "cache-not-used": ("caching",),
    "cache-not-appended": ("caching",),
    "cache-kept-across-prefill": ("caching",),
    # Losses and training steps.
    "sum-instead-of-mean": ("loss",),
    "loss-summed": ("loss",),
    "mean-over-ignored-targets": ("loss",),
    "targets-indexed-as-columns": ("loss",),
    "no-bias-correction": ("optimisation",),
    "adam-l2-weight-decay": ("optimisation",),
    "optimizer-state-reset": ("optimisation",),
    "gradients-accumulate": ("optimisation", "gradient-flow"),
    "clipping-not-applied": ("optimisation",),
    "clip-per-parameter": ("optimisation",),
    "grad-norm-after-clipping": ("optimisation",),
    # The weight probe (grader.diagnosis) and trainability (grader.trainability).
    "weights-differ": ("weight-initialisation",),
    "no-autograd-graph": ("gradient-flow",),
    "gradient-mismatch": ("gradient-flow",),
    "parameters-not-registered": ("parameter-registration",),
    "unexpected-parameters": ("parameter-registration",),
    "frozen-parameters": ("parameter-registration", "gradient-flow"),
    "numerically-unstable": ("numerical-stability",),
    # Errors every beginner meets (grader.error_findings).
    "float-size": ("tensors",),
    "matmul-sizes": ("tensors",),
    "sizes-do-not-broadcast": ("tensors",),
    "cat-sizes": ("tensors",),
    "axis-out-of-range": ("tensors",),
    "index-out-of-bounds": ("tensors",),
    "view-of-transposed": ("tensors",),
    "reshape-sizes": ("tensors",),
    "float64-mixed-in": ("tensors",),
    "parameters-named-otherwise": ("parameter-registration",),
    "layer-sizes": ("layer-sizes",),
}


def concepts_of(code: str) -> list[str]:
    """The concepts of a finding code; none for a code the table does not know."""
    return list(_CONCEPTS_OF_CODE.get(code, ()))


def known_codes() -> frozenset[str]:
    return frozenset(_CONCEPTS_OF_CODE)


def tagged(findings: Iterable[Finding]) -> list[Finding]:
    """The findings, each with its concepts: its own where it has any, else its code's."""
    return [
        finding
        if finding.concepts
        else finding.model_copy(update={"concepts": concepts_of(finding.code)})
        for finding in findings
    ]
