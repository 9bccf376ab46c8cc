import torch


def log_softmax(x):
    # The shift is a constant for the gradient: log-softmax does not depend on it, so it can be
    # detached (as many implementations do).
    m = x.max(dim=-1, keepdim=True).values.detach()
    x = x - m
    return x - torch.log(torch.exp(x).sum(dim=-1, keepdim=True))


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.size(-1))
    targets = targets.reshape(-1)
    mask = targets != ignore_index
    lp = log_softmax(logits[mask])
    rows = torch.arange(lp.shape[0])
    nll = -lp[rows, targets[mask]]
    return nll.sum() / mask.sum()
