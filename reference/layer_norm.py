"""Layer normalisation over the last dimension, with a learned affine.

Each vector x of the last dimension (D = normalized_shape features) is normalised by its own mean
and biased variance, with eps inside the square root, then scaled and shifted per feature:

    y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias,    var(x) = mean((x - mean(x))**2)

Shapes: any leading dimensions, e.g. (B, T, D); the output has the input's shape.
"""

from __future__ import annotations

import torch
from torch import nn

from grader.variants import WrongVariant


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.normalized_shape = normalized_shape
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape))  # gamma: (D,)
        self.bias = nn.Parameter(torch.zeros(normalized_shape))  # beta: (D,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.normalize(x) * self.weight + self.bias  # (..., D)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # (..., 1), biased
        return (x - mean) / torch.sqrt(variance + self.eps)  # (..., D)


# --- Known mistakes -------------------------------------------------------------------------


class _UnbiasedVariance(LayerNorm):
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        variance = x.var(dim=-1, keepdim=True)  # divides by D - 1
        return (x - mean) / torch.sqrt(variance + self.eps)


class _EpsOutsideRoot(LayerNorm):
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        std = ((x - mean) ** 2).mean(dim=-1, keepdim=True).sqrt()
        return (x - mean) / (std + self.eps)


class _NoEps(LayerNorm):
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        return (x - mean) / ((x - mean) ** 2).mean(dim=-1, keepdim=True).sqrt()


class _LastTwoAxes(LayerNorm):
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=(-2, -1), keepdim=True)  # each (T, D) sequence as a whole
        variance = ((x - mean) ** 2).mean(dim=(-2, -1), keepdim=True)
        return (x - mean) / torch.sqrt(variance + self.eps)


class _NoMeanSubtracted(LayerNorm):
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sqrt((x**2).mean(dim=-1, keepdim=True) + self.eps)  # RMSNorm


class _MissingBias(LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.normalize(x) * self.weight


class _MissingAffine(LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.normalize(x)


class _WeightBiasSwapped(LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.normalize(x) * self.bias + self.weight


VARIANTS = (
    WrongVariant(
        code="unbiased-variance",
        message="Your output matches dividing the squared deviations by D - 1 (x.var() and "
        "torch.std() default to the unbiased estimate). Layer normalisation uses the biased "
        "variance, the mean of the squared deviations: divide by D (unbiased=False).",
        entry=_UnbiasedVariance,
    ),
    WrongVariant(
        code="eps-outside-root",
        message="Your output matches adding eps to the standard deviation, (x - mean) / "
        "(std + eps). eps belongs inside the square root: divide by sqrt(var + eps).",
        entry=_EpsOutsideRoot,
    ),
    WrongVariant(
        code="missing-eps",
        message="Your output matches dividing by sqrt(var) with no eps at all. Add eps to the "
        "variance inside the square root, sqrt(var + eps), with the eps the constructor is given.",
        entry=_NoEps,
    ),
    WrongVariant(
        code="wrong-normalized-axis",
        message="Your output matches taking the mean and variance over the last two axes, "
        "each (T, D) sequence as a whole. Layer normalisation normalises each vector of the "
        "last dimension on its own: reduce over dim=-1 only, with keepdim=True.",
        entry=_LastTwoAxes,
    ),
    WrongVariant(
        code="mean-not-subtracted",
        message="Your output matches dividing x by its root mean square without subtracting "
        "the mean first (that is RMSNorm). Centre x by its mean over the last dimension, and "
        "take the variance of the centred values.",
        entry=_NoMeanSubtracted,
    ),
    WrongVariant(
        code="missing-bias",
        message="Your output matches the normalised x times weight, with no bias added: add the "
        "learned bias after scaling.",
        entry=_MissingBias,
    ),
    WrongVariant(
        code="missing-affine",
        message="Your output matches the normalised x alone: the learned per-feature weight "
        "(scale) and bias (shift) are never applied. Multiply by weight, then add bias.",
        entry=_MissingAffine,
    ),
    WrongVariant(
        code="weight-bias-swapped",
        message="Your output matches scaling by bias and adding weight: weight is the "
        "per-feature scale (multiplied) and bias the shift (added).",
        entry=_WeightBiasSwapped,
    ),
)
