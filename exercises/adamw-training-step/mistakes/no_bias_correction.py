# Hand-written AdamW without the bias correction of m and v.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.lr, self.wd, self.max_norm = lr, weight_decay, max_norm
        self.m = [torch.zeros_like(p) for p in self.model.parameters()]
        self.v = [torch.zeros_like(p) for p in self.model.parameters()]

    def forward(self, x):
        return self.model(x)

    def train_step(self, x, targets):
        self.model.zero_grad()
        loss = F.cross_entropy(self.model(x), targets)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        with torch.no_grad():
            for p, m, v in zip(self.model.parameters(), self.m, self.v):
                p.mul_(1 - self.lr * self.wd)
                m.mul_(0.9).add_(0.1 * p.grad)
                v.mul_(0.999).add_(0.001 * p.grad**2)
                p.sub_(self.lr * m / (v.sqrt() + 1e-8))
        return {"loss": loss.detach(), "grad_norm": norm}
