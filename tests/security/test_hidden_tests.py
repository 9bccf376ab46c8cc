"""Hidden tests tell a student one bit each, whatever the submission does.

The differential test grades the same submissions under two deployment secrets (so with other
hidden inputs, and under one secret with other drawn input sets): everything a student sees must
be the same but the hidden tests' pass bits and what is summed from them. The submissions try
every channel a hidden run could write to: prints, errors and their lines, refusals, time,
crashes, the global RNG's seed, properties and diagnosis.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grader.catalog import Catalog
from grader.inputs import hidden_seed
from grader.plan import HIDDEN_INPUT_SETS
from grader.report import Report, TestStatus
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
SEED = "multi-headed-self-attention"
PARITY = "torch-multihead-parity"
FUSED = "fused-qkv-attention"  # trainability scored: a hidden test's bit covers its gradients

# Acts on what only a hidden test has (a context of length 2, one head, 9 tokens: see the seed
# exercise's hidden tests), through every channel a run has.
LEAKY = """
import torch
import torch.nn as nn

class MultiHeadedSelfAttention(nn.Module):
    def __init__(self, embedding_dim, attention_dim, num_heads):
        super().__init__()
        print("seed", torch.initial_seed())
        self.heads = num_heads

    def forward(self, embedded):
        B, T, C = embedded.shape
        print("inputs", embedded.flatten()[:4].tolist())
        first = float(embedded.flatten()[0])
        if T == 2:
            raise ValueError(f"hidden input {first}")
        if self.heads == 1:
            getattr(torch, str(first))  # a refusal, under a name made of the input
        if T == 9:
            total = 0
            for step in range(int(abs(first) * 200000)):  # time as the input says
                total += step
        if first > 1.5:
            return embedded[:, :, :1]  # a wrong shape: a failure of another kind
        return torch.zeros(B, T, 0)
"""


# Trains wrong only where a hidden test's shapes say so, and talks from the backward pass: a
# hook prints the gradient and raises with its values, on hidden inputs alone.
LEAKY_GRADIENTS = (
    (EXERCISES / FUSED / "solutions/reshape_chunk_scaled_dot_product.py")
    .read_text()
    .replace(
        "        return self.linear_layer(values)",
        """        out = self.linear_layer(values)
        if sequence_length == 2 and out.requires_grad:
            out.register_hook(lambda grad: print("hidden gradient", grad.flatten()[:3].tolist()))
            return out.detach()
        if self.num_heads == 1 and out.requires_grad:

            def shout(grad):
                raise ValueError(f"hidden gradient {grad.flatten()[0].item()}")

            out.register_hook(shout)
        return out""",
    )
)


def view(report: Report) -> dict[str, Any]:
    """What a student sees, less the hidden tests' bits and what is summed from them, and less
    durations (noise from one run to the next)."""
    seen = report.model_dump(mode="json", exclude={"score", "status", "message", "duration_ms"})
    for test in seen["tests"]:
        test.pop("duration_ms")
        if test["visibility"] == "hidden":
            for bit in ("status", "score", "message"):
                test.pop(bit)
    return seen


@pytest.fixture(scope="module")
def graders() -> Iterator[tuple[Grader, Grader]]:
    catalog = Catalog.from_folder(GraderSettings().exercises_dir)
    sandbox = WarmProcessSandbox(slots=2)
    try:
        yield Grader(catalog, sandbox, "one secret"), Grader(catalog, sandbox, "another secret")
    finally:
        sandbox.close()


CORRECT = (EXERCISES / SEED / "solutions/neetcode_common_answer.py").read_text()
SUBMITTED = {
    "correct": (SEED, CORRECT),
    "a common mistake": (SEED, (EXERCISES / SEED / "mistakes/missing_scaling.py").read_text()),
    "leaky": (SEED, LEAKY),
    "leaky through its gradients": (FUSED, LEAKY_GRADIENTS),
    "printing its seed, with grader-drawn weights": (
        PARITY,
        (EXERCISES / PARITY / "solutions/in_proj_chunk_split_heads.py")
        .read_text()
        .replace(
            "super().__init__()", 'super().__init__()\n        print("seed", torch.initial_seed())'
        ),
    ),
}


@pytest.mark.parametrize("name", SUBMITTED)
def test_a_student_sees_the_same_report_under_any_secret_but_hidden_bits(
    graders: tuple[Grader, Grader], name: str
) -> None:
    slug, source = SUBMITTED[name]
    first, second = graders
    reports = [first.grade(slug, source), first.grade(slug, source), second.grade(slug, source)]
    assert view(reports[0]) == view(reports[1]) == view(reports[2])


# No known mistake explains it: staff group it by its behaviour.
POSITIONS_REVERSED = CORRECT.replace("return scores @ v", "return torch.flip(scores @ v, dims=[1])")


@pytest.mark.parametrize("source", [POSITIONS_REVERSED, LEAKY], ids=["unexplained", "leaky"])
def test_a_wrong_answer_s_behaviour_is_the_same_under_any_secret(
    graders: tuple[Grader, Grader], source: str
) -> None:
    first, second = graders
    behaviours = [grader.grade(SEED, source).behaviour for grader in (first, first, second)]
    assert behaviours[0] is not None and behaviours[0].facts
    assert behaviours[0] == behaviours[1] == behaviours[2]


def test_a_hidden_run_shows_one_bit_per_test(graders: tuple[Grader, Grader]) -> None:
    grader, _ = graders
    report = grader.grade(SEED, LEAKY)
    hidden = [test for test in report.tests if test.visibility.value == "hidden"]
    assert {(test.status, test.message) for test in hidden} == {
        (TestStatus.FAILED, "hidden test: failed")
    }
    assert all(test.stdout == "" and test.duration_ms is None for test in hidden)
    assert "hidden input" not in report.model_dump_json()


def test_a_hidden_gradient_pass_shows_one_bit_per_test(graders: tuple[Grader, Grader]) -> None:
    grader, _ = graders
    report = grader.grade(FUSED, LEAKY_GRADIENTS)
    bits = {test.name: (test.status, test.message) for test in report.tests}
    failed = (TestStatus.FAILED, "hidden test: failed")
    assert bits["context length 2, causal mask"] == bits["one head, causal mask"] == failed
    assert all(
        test.status is TestStatus.PASSED
        for test in report.tests
        if test.visibility.value == "visible"
    )
    assert report.diagnosis == []
    assert {check.status.value for check in report.properties} <= {"passed"}
    assert "hidden gradient" not in report.model_dump_json()


def test_no_seed_of_a_hidden_input_reaches_the_submission(graders: tuple[Grader, Grader]) -> None:
    grader, _ = graders
    catalog = Catalog.from_folder(GraderSettings().exercises_dir)
    report = grader.grade(PARITY, SUBMITTED["printing its seed, with grader-drawn weights"][1])
    printed = "".join(test.stdout for test in report.tests)
    assert "seed" in printed
    seeds = {
        str(hidden_seed("one secret", PARITY, f"{test.name}/{index}"))
        for test in catalog.get(PARITY).spec.tests
        for index in range(HIDDEN_INPUT_SETS)
    }
    assert not any(seed in printed for seed in seeds)


# A sequence of calls on one instance (tests/grader/course_model): state kept across the calls
# of a hidden test, and across tests in a class attribute, talks through every later call.
COURSE_MODEL = ROOT / "tests/grader/course_model"
LEAKY_SEQUENCE = (
    (COURSE_MODEL / "reference/course_model.py")
    .read_text()
    .replace(
        "    def accumulate(self, x: torch.Tensor) -> torch.Tensor:\n",
        """    seen: list[float] = []

    def accumulate(self, x: torch.Tensor) -> torch.Tensor:
        Scaler.seen.append(float(x.flatten()[0]))
        print("seen so far", Scaler.seen)
        if len(Scaler.seen) > 5:
            raise ValueError(f"hidden inputs {Scaler.seen}")
        if x.shape[-1] == 3:
            return x.sum(0) * 0 + Scaler.seen[0]
""",
    )
)


def test_a_hidden_sequence_shows_one_bit_whatever_state_it_keeps() -> None:
    catalog = Catalog.from_folder(COURSE_MODEL / "exercises")
    sandbox = WarmProcessSandbox(slots=1)
    try:
        reports = [
            Grader(catalog, sandbox, secret).grade("course-model", LEAKY_SEQUENCE)
            for secret in ("one secret", "one secret", "another secret")
        ]
    finally:
        sandbox.close()
    assert view(reports[0]) == view(reports[1]) == view(reports[2])
    hidden = [test for test in reports[0].tests if test.visibility.value == "hidden"]
    assert [(test.status, test.message) for test in hidden] == [
        (TestStatus.FAILED, "hidden test: failed")
    ]
    assert "seen so far" in reports[0].model_dump_json()  # the visible sequence's prints
    assert "hidden inputs" not in reports[0].model_dump_json()


WRONG_ATTENTION = {
    "no attention at all: each head is its value_gen(x)": CORRECT.replace(
        "return scores @ v", "return v"
    ),
    **{
        name: (EXERCISES / SEED / f"mistakes/{name}.py").read_text()
        for name in ("no_causal_mask", "missing_scaling", "softmax_over_queries")
    },
}


@pytest.mark.parametrize("name", WRONG_ATTENTION)
def test_code_wrong_in_its_attention_earns_no_hidden_point(
    graders: tuple[Grader, Grader], name: str
) -> None:
    # A hidden test of one token passed them all: a softmax over one key is 1.
    grader, _ = graders
    report = grader.grade(SEED, WRONG_ATTENTION[name])
    hidden = [test for test in report.tests if test.visibility.value == "hidden"]
    assert hidden and not [test.name for test in hidden if test.status is TestStatus.PASSED]
