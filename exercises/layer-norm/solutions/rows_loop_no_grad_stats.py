# Style: flattens to rows and loops over them, stacks the results; keeps the last batch's statistics for debugging under torch.no_grad(), an eps buffer.
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.register_buffer("eps", torch.tensor(eps))
        self.last_stats = None

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        out = []
        for row in rows:
            mu = row.sum() / row.numel()
            var = ((row - mu) ** 2).sum() / row.numel()
            out.append((row - mu) / torch.sqrt(var + self.eps.to(row.dtype)))
        xhat = torch.stack(out).reshape(x.shape)
        with torch.no_grad():
            self.last_stats = (xhat.mean().item(), xhat.std().item())
        return xhat * self.weight + self.bias
