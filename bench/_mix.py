"""The submissions the load benchmarks send, what each must get, and their in-process work.

A mix of the seed exercise's student-style files (its reference-like correct answer and every
file of its mistakes/), each source made distinct as a class's are, and the verdict each must
get, written out here rather than taken from the engine: the benchmarks check the service
against them, and the in-process floor too, so both measure the same work.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import CORRECT, MISTAKES, SLUG, in_process_grader

from grader.trainability import TRAINABILITY_CODES


@dataclass(frozen=True)
class Verdict:
    status: str
    codes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.status} {list(self.codes)}"


EXPECTED = {
    "correct": Verdict("passed"),
    "missing_scaling": Verdict("failed", ("missing-scaling",)),
    "no_causal_mask": Verdict("failed", ("no-causal-mask",)),
    "mask_inverted_large_negative": Verdict("failed", ("mask-inverted",)),
    "unscaled_unmasked": Verdict("failed", ("missing-scaling", "no-causal-mask")),
    "full_size_heads": Verdict("failed", ("full-size-heads",)),
    "concat_along_sequence": Verdict("failed", ("concat-along-sequence",)),
    "softmax_over_queries": Verdict("failed", ("softmax-over-queries",)),
    "rounded_to_2_decimals": Verdict("failed", ("rounded-to-2-decimals",)),
    "rounded_to_3_decimals": Verdict("failed", ("rounded-to-3-decimals",)),
    "extra_output_projection": Verdict("failed", ("extra-output-projection",)),
    "extra_output_projection_without_bias": Verdict("failed", ("extra-output-projection",)),
    "layers_in_another_order": Verdict("failed", ("weights-differ",)),
    "float_head_size": Verdict("failed", ("float-size",)),
    "uses_builtin_attention": Verdict("rejected", ("not-allowed",)),
    # Trainability is reported in this exercise: full marks, and the finding.
    "no_grad_printoptions": Verdict("passed", ("no-autograd-graph",)),
    "rounded_through_tolist": Verdict("passed", ("no-autograd-graph",)),
    "heads_in_plain_list": Verdict("passed", ("parameters-not-registered",)),
    "weights_as_plain_tensors": Verdict("passed", ("parameters-not-registered",)),
    "frozen_seeded_weights": Verdict("passed", ("frozen-parameters",)),
    "unused_output_projection": Verdict("passed", ("unexpected-parameters",)),
    "softmax_exp_over_sum": Verdict("passed", ("numerically-unstable",)),
}


def expected_verdict(name: str, *, trainability: bool = True) -> Verdict:
    """The verdict `name` must get; with the trainability checks off, one they name passes
    unnamed (the seed exercise only reports them)."""
    verdict = EXPECTED[name]
    if trainability:
        return verdict
    codes = tuple(code for code in verdict.codes if code not in TRAINABILITY_CODES)
    return Verdict("passed" if verdict.codes and not codes else verdict.status, codes)


@dataclass(frozen=True)
class Job:
    name: str  # the submission file's stem, the key of EXPECTED
    source: str


def mix(count: int, tag: str = "submission", correct_share: float = 0.5) -> list[Job]:
    """`count` distinct sources, `correct_share` of them correct, spread evenly; the rest cycle
    through the mistakes."""
    files = {path.stem: path.read_text(encoding="utf-8") for path in MISTAKES.glob("*.py")}
    files["correct"] = CORRECT.read_text(encoding="utf-8")
    if unknown := sorted(files.keys() - EXPECTED.keys()):
        raise SystemExit(f"no expected verdict for {unknown}: add them to EXPECTED")
    mistakes = sorted(name for name in files if name != "correct")
    names, wrong = [], 0
    for n in range(count):
        if math.ceil((n + 1) * correct_share) > math.ceil(n * correct_share):
            names.append("correct")
        else:
            names.append(mistakes[wrong % len(mistakes)])
            wrong += 1
    # Distinct sources, as a class's are: nothing may be served from a cache of equal ones.
    return [Job(name, f"{files[name]}\n# {tag} {n}\n") for n, name in enumerate(names)]


def verdict_of(report: dict[str, object]) -> Verdict:
    diagnosis = report.get("diagnosis")
    assert isinstance(diagnosis, list)
    return Verdict(str(report["status"]), tuple(str(finding["code"]) for finding in diagnosis))


def work_cpu_per_grading(jobs: Sequence[Job], reps: int, forward_only: Path | None = None) -> float:
    """CPU-seconds of the in-process work per grading, averaged over the mix as sent (against
    the exercises of `forward_only`, where given). A verdict other than the expected one ends
    the run: the floor would not be the work the service does."""
    counts = Counter(job.name for job in jobs)
    sources = {job.name: job.source for job in jobs}
    with in_process_grader(forward_only) as grader:
        cpu = {}
        for name, source in sources.items():
            # Untimed (first-use costs are not the work), and checked (the table could be wrong).
            verdict = verdict_of(grader.grade(SLUG, source).model_dump(mode="json"))
            wanted = expected_verdict(name, trainability=forward_only is None)
            if verdict != wanted:
                raise SystemExit(f"in-process, {name} got {verdict}, not {wanted}")
            started = time.process_time()
            for _ in range(reps):
                grader.grade(SLUG, source)
            cpu[name] = (time.process_time() - started) / reps
    return sum(cpu[name] * count for name, count in counts.items()) / len(jobs)
