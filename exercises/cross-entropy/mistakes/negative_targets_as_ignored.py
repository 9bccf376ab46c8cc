import torch


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    valid = targets >= 0  # ignore_index is negative
    lse = torch.logsumexp(logits[valid], dim=-1)
    picked = logits[valid].gather(1, targets[valid].unsqueeze(1)).squeeze(1)
    return (lse - picked).mean()
