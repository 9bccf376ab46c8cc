import torch


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    log_probs = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    mask = (targets != ignore_index).float()
    picked = log_probs.gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
    return -(picked * mask).mean()
