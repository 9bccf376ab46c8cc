import torch


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    logits, targets = logits[keep], targets[keep]
    log_probs = logits - torch.log(torch.exp(logits).sum(dim=1, keepdim=True))
    return -log_probs[torch.arange(len(targets)), targets].mean()
