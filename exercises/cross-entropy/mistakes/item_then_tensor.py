import torch


def cross_entropy(logits, targets, ignore_index=-100):
    C = logits.shape[-1]
    logits, targets = logits.reshape(-1, C), targets.reshape(-1)
    keep = targets != ignore_index
    log_probs = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    total = 0.0
    for row, t in zip(log_probs[keep], targets[keep]):
        total += -row[t].item()
    return torch.tensor(total / keep.sum().item())
