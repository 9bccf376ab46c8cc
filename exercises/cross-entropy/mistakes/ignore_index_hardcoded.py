import torch


def cross_entropy(logits, targets, ignore_index=-100):
    C = logits.shape[-1]
    logits = logits.view(-1, C)
    targets = targets.view(-1)
    mask = targets != -100  # padding
    logits, targets = logits[mask], targets[mask]
    log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    return -log_probs[torch.arange(targets.shape[0]), targets].mean()
