import torch


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    logits, targets = logits[keep], targets[keep]
    # the normaliser is a constant per row
    lse = torch.logsumexp(logits, dim=1).detach()
    return (lse - logits.gather(1, targets[:, None]).squeeze(1)).mean()
