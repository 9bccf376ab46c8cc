import torch.nn.functional as F


def cross_entropy(logits, targets, ignore_index=-100):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=ignore_index)
