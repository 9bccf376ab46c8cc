import torch


def cross_entropy(logits, targets, ignore_index=-100):
    log_probs = logits.log_softmax(dim=-1).flatten(0, -2)
    targets = targets.flatten()
    keep = targets != ignore_index
    return -log_probs[keep].gather(1, targets[keep].unsqueeze(1)).mean()
