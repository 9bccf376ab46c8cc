"""One training step of a small classifier: cross-entropy loss, global gradient-norm clipping, and
AdamW (Loshchilov & Hutter, "Decoupled Weight Decay Regularization"), written out.

For every parameter θ with gradient g (after clipping), at step t = 1, 2, ...:

    θ ← θ - lr · λ · θ                         decoupled weight decay
    m ← β1 · m + (1 - β1) · g                  first moment
    v ← β2 · v + (1 - β2) · g²                 second moment
    m̂ = m / (1 - β1^t),  v̂ = v / (1 - β2^t)    bias correction
    θ ← θ - lr · m̂ / (√v̂ + ε)

with torch.optim.AdamW's defaults β1 = 0.9, β2 = 0.999, ε = 1e-8. Clipping scales every gradient
by max_norm / (‖g‖ + 1e-6) when that is below 1, ‖g‖ being the norm of all gradients together,
as torch.nn.utils.clip_grad_norm_ does.

Shapes: B is the batch size; x is (B, d_in), targets (B,) class indices in [0, d_out).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from grader.variants import WrongVariant

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8
CLIP_EPS = 1e-6


class Trainer(nn.Module):
    def __init__(  # noqa: PLR0917 (the statement's constructor, called by name)
        self,
        d_in: int,
        d_hidden: int,
        d_out: int,
        lr: float,
        weight_decay: float,
        max_norm: float,
    ) -> None:
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.lr, self.weight_decay, self.max_norm = lr, weight_decay, max_norm
        self.t = 0  # steps taken
        self.m: dict[str, torch.Tensor] = {}  # first moments, by parameter name
        self.v: dict[str, torch.Tensor] = {}  # second moments

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.model(x)  # (B, d_out)
        return logits

    def train_step(self, x: torch.Tensor, targets: torch.Tensor) -> dict[str, torch.Tensor]:
        self.zero_grad()
        loss = self.loss(self(x), targets)
        torch.autograd.backward(loss)
        grad_norm = self.clip_gradients()
        with torch.no_grad():
            self.adamw_update()
        return {"loss": loss.detach(), "grad_norm": grad_norm}

    def loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)  # the mean over the batch

    def gradients(self) -> dict[str, torch.Tensor]:
        return {name: p.grad for name, p in self.model.named_parameters() if p.grad is not None}

    def clip_gradients(self) -> torch.Tensor:
        """Scale all gradients together so that their global norm is at most max_norm; return
        the norm before clipping."""
        grads = self.gradients().values()
        total_norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads))  # type: ignore[arg-type]
        scale = torch.clamp(self.max_norm / (total_norm + CLIP_EPS), max=1.0)
        for g in grads:
            g.mul_(scale)
        return total_norm

    def adamw_update(self) -> None:
        self.t += 1
        for name, p in self.model.named_parameters():
            g = p.grad
            if g is None:
                continue
            p.mul_(1 - self.lr * self.weight_decay)  # decoupled weight decay
            m = BETA1 * self.m.get(name, torch.zeros_like(p)) + (1 - BETA1) * g
            v = BETA2 * self.v.get(name, torch.zeros_like(p)) + (1 - BETA2) * g * g
            self.m[name], self.v[name] = m, v
            m_hat, v_hat = self.bias_corrected(m, v)
            p.sub_(self.lr * m_hat / (torch.sqrt(v_hat) + EPS))

    def bias_corrected(self, m: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return m / (1 - BETA1**self.t), v / (1 - BETA2**self.t)


# --- Known mistakes -------------------------------------------------------------------------


class _AdamL2(Trainer):
    """Adam with L2 regularisation: the decay is added to the gradient, then normalised."""

    def adamw_update(self) -> None:
        for p in self.model.parameters():
            if p.grad is not None:
                p.grad.add_(p, alpha=self.weight_decay)
        decay, self.weight_decay = self.weight_decay, 0.0
        super().adamw_update()
        self.weight_decay = decay


class _LossSummed(Trainer):
    def loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets, reduction="sum")


class _ClippingNotApplied(Trainer):
    def clip_gradients(self) -> torch.Tensor:
        grads = self.gradients().values()
        return torch.sqrt(sum((g**2).sum() for g in grads))  # type: ignore[arg-type]


class _ClipPerParameter(Trainer):
    def clip_gradients(self) -> torch.Tensor:
        grads = self.gradients().values()
        total_norm = torch.sqrt(sum((g**2).sum() for g in grads))  # type: ignore[arg-type]
        for g in grads:
            g.mul_(torch.clamp(self.max_norm / (g.norm() + CLIP_EPS), max=1.0))
        return total_norm


class _GradNormAfterClipping(Trainer):
    def clip_gradients(self) -> torch.Tensor:
        super().clip_gradients()
        return torch.sqrt(sum((g**2).sum() for g in self.gradients().values()))  # type: ignore[arg-type]


class _NoBiasCorrection(Trainer):
    def bias_corrected(self, m: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return m, v


class _GradientsAccumulate(Trainer):
    def zero_grad(self, set_to_none: bool = True) -> None:
        pass


class _OptimizerStateReset(Trainer):
    """A new optimizer at every step: moments and step count start over each time."""

    def adamw_update(self) -> None:
        self.t, self.m, self.v = 0, {}, {}
        super().adamw_update()


VARIANTS = (
    WrongVariant(
        code="adam-l2-weight-decay",
        message="Your steps match Adam with L2 regularisation: the weight decay is added to the "
        "gradient (g + λθ) and then divided by √v̂ like the rest of it. AdamW decouples it: "
        "shrink each weight by lr·λ·θ directly, apart from the moments (torch.optim.AdamW, "
        "not torch.optim.Adam with weight_decay).",
        entry=_AdamL2,
    ),
    WrongVariant(
        code="loss-summed",
        message="Your loss matches the sum of the cross-entropy over the batch: take its mean "
        "(F.cross_entropy's default reduction), so that the loss and the gradients do not grow "
        "with the batch size.",
        entry=_LossSummed,
    ),
    WrongVariant(
        code="clipping-not-applied",
        message="Your steps match an update whose gradients were never clipped: the clipping "
        "must scale the gradients after backward() and before the optimizer's step, which "
        "reads them (clipping after the step changes nothing that step used).",
        entry=_ClippingNotApplied,
    ),
    WrongVariant(
        code="clip-per-parameter",
        message="Your steps match clipping each parameter's gradient to max_norm on its own. "
        "The norm to clip is the global one, of all gradients together: "
        "sqrt(sum over parameters of ‖g‖²), one scale for every gradient.",
        entry=_ClipPerParameter,
    ),
    WrongVariant(
        code="grad-norm-after-clipping",
        message="Your grad_norm is the norm of the gradients after clipping (never more than "
        "max_norm). Return the total norm measured before clipping, which is what "
        "clip_grad_norm_ returns.",
        entry=_GradNormAfterClipping,
    ),
    WrongVariant(
        code="no-bias-correction",
        message="Your steps match Adam without bias correction: the moments start at zero, so "
        "early steps must divide m by (1 - β1^t) and v by (1 - β2^t), t being the number of "
        "steps taken so far, counting this one.",
        entry=_NoBiasCorrection,
    ),
    WrongVariant(
        code="gradients-accumulate",
        message="Your gradients accumulate from one step to the next: backward() adds to .grad, "
        "so each step must zero the gradients (optimizer.zero_grad()) before its backward pass.",
        entry=_GradientsAccumulate,
    ),
    WrongVariant(
        code="optimizer-state-reset",
        message="Your steps each match the first step of a fresh optimizer: the moments and "
        "the step count start over at every call. Create the optimizer once, in __init__, and "
        "keep it across steps.",
        entry=_OptimizerStateReset,
    ),
)
