# Style: AdamW written out by hand from the paper, moments in python lists (not parameters), a global norm from the per-parameter norms, clipping with an `if`.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.lr = lr
        self.wd = weight_decay
        self.max_norm = max_norm
        self.beta1, self.beta2, self.eps = 0.9, 0.999, 1e-8
        self.t = 0
        self.m = None
        self.v = None

    def forward(self, x):
        return self.model(x)

    def train_step(self, x, targets):
        params = list(self.model.parameters())
        for p in params:
            p.grad = None
        loss = F.cross_entropy(self.forward(x), targets)
        loss.backward()

        norms = torch.stack([p.grad.norm(2) for p in params])
        total_norm = norms.norm(2)
        if total_norm > self.max_norm:
            for p in params:
                p.grad *= self.max_norm / total_norm

        if self.m is None:
            self.m = [torch.zeros_like(p) for p in params]
            self.v = [torch.zeros_like(p) for p in params]
        self.t += 1
        with torch.no_grad():
            for i, p in enumerate(params):
                g = p.grad
                p -= self.lr * self.wd * p
                self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
                self.v[i] = self.beta2 * self.v[i] + (1 - self.beta2) * g**2
                m_hat = self.m[i] / (1 - self.beta1**self.t)
                v_hat = self.v[i] / (1 - self.beta2**self.t)
                p -= self.lr * m_hat / (torch.sqrt(v_hat) + self.eps)
        return {"loss": loss.detach(), "grad_norm": total_norm}
