"""The position-wise feed-forward block of a Transformer, as in GPT-2's MLP.

    FFN(x) = Dropout(W_2 GELU(W_1 x + b_1) + b_2)

Every position is transformed on its own: `fc1` expands d_model to expansion * d_model
features, the exact GELU (x * Phi(x), with Phi the standard normal CDF) acts on each of them,
`fc2` projects back to d_model, and dropout acts on the block's output, in training only.

Shapes: B is the batch size, T the sequence length.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import WrongVariant


class FeedForward(nn.Module):
    def __init__(self, d_model: int, expansion: int = 4, dropout: float = 0.1) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, T, d_model)
        hidden = self.activation(self.fc1(x))  # (B, T, expansion * d_model)
        out: torch.Tensor = self.dropout(self.fc2(hidden))  # (B, T, d_model)
        return out

    def activation(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.gelu(hidden)  # exact: hidden * Phi(hidden)


# --- Known mistakes -------------------------------------------------------------------------
# The dropout mistakes show only where dropout acts: a misplaced or mis-sized dropout on the
# tests in train mode, a dropout left on in eval mode on the tests in eval mode.


class _Relu(FeedForward):
    def activation(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.relu(hidden)


class _TanhGelu(FeedForward):
    def activation(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.gelu(hidden, approximate="tanh")


class _DropoutOnHidden(FeedForward):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.dropout(self.activation(self.fc1(x)))  # dropped before fc2
        out: torch.Tensor = self.fc2(hidden)
        return out


class _DropoutOnInput(FeedForward):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.fc2(self.activation(self.fc1(self.dropout(x))))
        return out


class _DropoutInEval(FeedForward):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.fc2(self.activation(self.fc1(x)))
        return F.dropout(out, self.dropout.p)  # training=True whatever the mode


class _KeepProbability(FeedForward):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.fc2(self.activation(self.fc1(x)))
        return F.dropout(out, 1 - self.dropout.p, self.training)  # drops 1 - p of them


_MISPLACED = (
    "Your output matches dropout applied at another place than the block's output (on the "
    "hidden features or on the input). This exercise drops out the output of fc2, as GPT-2's "
    "MLP does: fc1, GELU, fc2, then dropout, once."
)

VARIANTS = (
    WrongVariant(
        code="relu-instead-of-gelu",
        message="Your output matches a ReLU between the two linear layers: use the exact GELU, "
        "nn.GELU() or F.gelu(h).",
        entry=_Relu,
    ),
    WrongVariant(
        code="tanh-gelu",
        message="Your output matches GELU's tanh approximation (GPT-2's 0.5 x (1 + tanh(...))), "
        "which differs from the exact GELU by up to 5e-4: use the exact one, x * Phi(x), as "
        "nn.GELU() or F.gelu(h) compute it by default.",
        entry=_TanhGelu,
    ),
    WrongVariant(code="dropout-misplaced", message=_MISPLACED, entry=_DropoutOnHidden),
    WrongVariant(code="dropout-misplaced", message=_MISPLACED, entry=_DropoutOnInput),
    WrongVariant(
        code="dropout-in-eval",
        message="Your output matches dropout that stays on in eval mode: F.dropout(x, p) drops "
        "whatever the mode. Pass training=self.training, or use an nn.Dropout layer, which "
        "follows model.train() and model.eval().",
        entry=_DropoutInEval,
    ),
    WrongVariant(
        code="keep-probability",
        message="Your output matches dropout given the probability to keep (1 - p) instead of "
        "the probability to drop: nn.Dropout(p) and F.dropout(x, p) drop a fraction p.",
        entry=_KeepProbability,
    ),
)
