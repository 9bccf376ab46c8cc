import torch


def cross_entropy(logits, targets, ignore_index=-100):
    C = logits.shape[-1]
    logits = logits.view(-1, C)
    targets = targets.view(-1)
    keep = targets != ignore_index
    logits, targets = logits[keep], targets[keep]
    log_probs = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    return -log_probs.gather(1, targets.unsqueeze(1)).mean()
