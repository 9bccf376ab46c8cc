import torch
import torch.nn.functional as F


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    num_classes = logits.shape[-1]
    valid = targets != ignore_index                      # (...,)
    safe_targets = torch.where(valid, targets, torch.zeros_like(targets))  # any class will do
    one_hot = F.one_hot(safe_targets, num_classes).to(logits.dtype)       # (..., C)

    lse = torch.logsumexp(logits, dim=-1)                # (...,)
    target_logit = (one_hot * logits).sum(dim=-1)        # (...,)
    losses = torch.where(valid, lse - target_logit, torch.zeros_like(lse))
    return losses.sum() / valid.sum()
