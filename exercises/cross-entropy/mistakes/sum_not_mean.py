import torch


def cross_entropy(logits, targets, ignore_index=-100):
    C = logits.size(-1)
    logits, targets = logits.reshape(-1, C), targets.reshape(-1)
    keep = targets != ignore_index
    lse = torch.logsumexp(logits[keep], dim=1)
    target_logits = logits[keep][torch.arange(int(keep.sum())), targets[keep]]
    return (lse - target_logits).sum()
