import torch


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    m = logits.max(dim=-1, keepdim=True).values
    log_probs = logits - m - torch.log(torch.exp(logits - m).sum(dim=-1, keepdim=True))
    log_probs = log_probs[keep]
    return -log_probs[:, targets[keep]].mean()
