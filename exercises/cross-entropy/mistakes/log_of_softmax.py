import torch
import torch.nn.functional as F


def cross_entropy(logits, targets, ignore_index=-100):
    probs = F.softmax(logits, dim=-1).reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    p = probs[keep].gather(1, targets[keep].unsqueeze(1))
    return -torch.log(p).mean()
