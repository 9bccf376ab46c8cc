import math

import numpy as np
import torch


def cross_entropy(logits, targets, ignore_index=-100):
    print("logits", logits.shape, "targets", targets.shape)
    flat_logits = logits.reshape(-1, logits.shape[-1])
    flat_targets = targets.reshape(-1).tolist()
    losses = []
    for i, t in enumerate(flat_targets):
        if t == ignore_index:
            continue
        row = flat_logits[i]
        m = row.max()
        lse = m + torch.log(torch.sum(torch.exp(row - m)))
        losses.append(lse - row[t])
    loss = torch.stack(losses).mean()
    print("loss", loss.item(), "over", len(losses), "targets")
    return loss


if __name__ == "__main__":
    logits = torch.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3], [1.2, 0.2, 3.1]])
    print(cross_entropy(logits, torch.tensor([0, 1, -100])))
