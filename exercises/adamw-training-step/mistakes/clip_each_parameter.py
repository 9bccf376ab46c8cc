# Clips each parameter's gradient to max_norm separately, logging the total norm.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.max_norm = max_norm
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=weight_decay)

    def forward(self, x):
        return self.model(x)

    def train_step(self, x, targets):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), targets)
        loss.backward()
        total = 0.0
        for p in self.model.parameters():
            total += p.grad.norm() ** 2
            nn.utils.clip_grad_norm_(p, self.max_norm)
        self.optimizer.step()
        return {"loss": loss.detach(), "grad_norm": total.sqrt()}
