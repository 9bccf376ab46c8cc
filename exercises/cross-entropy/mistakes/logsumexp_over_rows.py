import torch


def cross_entropy(logits, targets, ignore_index=-100):
    # log-softmax: subtract the log of the normaliser
    log_probs = logits - torch.logsumexp(logits, dim=0, keepdim=True)
    log_probs = log_probs.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    return -log_probs[keep].gather(1, targets[keep][:, None]).mean()
