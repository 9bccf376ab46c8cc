"""Cross-entropy from logits, averaged over the targets that are not ignored.

    loss = -(1/K) sum_{i kept} log softmax(z_i)[y_i],
    log softmax(z)[c] = z_c - m - log sum_j exp(z_j - m),   m = max_j z_j

The max is subtracted before the exponential so that it never overflows: large logits (x30)
stay finite. Targets equal to `ignore_index` (padding, masked positions) count neither in the
sum nor in K, the number of kept targets.

Shapes: the classes are on the last axis of the logits, (N, C) or (B, T, C), and the targets
have the logits' other axes, (N,) or (B, T).
"""

from __future__ import annotations

import torch

from grader.variants import WrongVariant


def cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    log_probs, targets = _flat_log_probs(logits, targets)  # (N, C), (N,)
    kept = targets != ignore_index  # (N,)
    return -_picked(log_probs[kept], targets[kept]).mean()  # 0-d


def log_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = logits - logits.amax(dim=dim, keepdim=True)  # the largest is 0: exp <= 1
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()


def _flat_log_probs(
    logits: torch.Tensor, targets: torch.Tensor, dim: int = -1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every position's log-probabilities, normalised over `dim`, (N, C), and its target, (N,)."""
    num_classes = logits.size(-1)
    return log_softmax(logits, dim).reshape(-1, num_classes), targets.reshape(-1)


def _picked(log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each row's log-probability of its own target: (K, C), (K,) -> (K,)."""
    return log_probs.gather(1, targets.unsqueeze(1)).squeeze(1)


# --- Known mistakes -------------------------------------------------------------------------
# Every visible test ignores some targets and keeps several, so that each mistake shows on it.


def _mean_over_every_target(
    logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    log_probs, targets = _flat_log_probs(logits, targets)
    kept = targets != ignore_index
    return -_picked(log_probs[kept], targets[kept]).sum() / targets.numel()


def _sum(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    log_probs, targets = _flat_log_probs(logits, targets)
    kept = targets != ignore_index
    return -_picked(log_probs[kept], targets[kept]).sum()


def _normalised_over_first_axis(
    logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    log_probs, targets = _flat_log_probs(logits, targets, dim=0)
    kept = targets != ignore_index
    return -_picked(log_probs[kept], targets[kept]).mean()


def _targets_as_columns(
    logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    log_probs, targets = _flat_log_probs(logits, targets)
    kept = targets != ignore_index
    return -log_probs[kept][:, targets[kept]].mean()  # (K, K): every row, every kept target


VARIANTS = (
    WrongVariant(
        code="mean-over-ignored-targets",
        message="Your loss matches the sum over the kept targets divided by the number of ALL "
        "targets, ignored ones included: divide by the number of targets that are not "
        "ignore_index.",
        entry=_mean_over_every_target,
    ),
    WrongVariant(
        code="sum-instead-of-mean",
        message="Your loss matches the sum of the kept targets' losses: return their mean.",
        entry=_sum,
    ),
    WrongVariant(
        code="softmax-over-wrong-axis",
        message="Your loss matches log-probabilities normalised over the first axis (the rows, "
        "or the batch) instead of the classes: normalise over the last axis, dim=-1, so that "
        "each position's probabilities over the C classes sum to 1.",
        entry=_normalised_over_first_axis,
    ),
    WrongVariant(
        code="targets-indexed-as-columns",
        message="Your loss matches log_probs[:, targets], which takes every target's column for "
        "every row, a (K, K) matrix: take one entry per row, log_probs[torch.arange(K), "
        "targets] or log_probs.gather(1, targets.unsqueeze(1)).",
        entry=_targets_as_columns,
    ),
)
