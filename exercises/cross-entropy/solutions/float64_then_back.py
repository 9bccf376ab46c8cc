import torch


def cross_entropy(logits, targets, ignore_index=-100):
    # in double precision to be safe with large logits; back to the input's dtype at the end
    z = logits.to(torch.float64).flatten(end_dim=-2)
    y = targets.flatten()
    valid = y.ne(ignore_index)
    z, y = z[valid], y[valid]
    m, _ = z.max(dim=1, keepdim=True)
    log_norm = m.squeeze(1) + (z - m).exp().sum(1).log()
    nll = log_norm - z[torch.arange(y.numel()), y]
    return nll.mean().to(logits.dtype)
