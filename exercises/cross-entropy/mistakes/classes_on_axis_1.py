import torch


def cross_entropy(logits, targets, ignore_index=-100):
    # classes on dim 1, as F.cross_entropy takes them: (N, C) or (B, C, T)
    log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    keep = targets != ignore_index
    picked = log_probs.gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
    return -picked[keep].mean()
