# A new AdamW at every step: its moments and step count start over each time.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.lr, self.weight_decay, self.max_norm = lr, weight_decay, max_norm

    def forward(self, x):
        return self.model(x)

    def train_step(self, x, targets):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), targets)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        optimizer.step()
        return {"loss": loss.detach(), "grad_norm": grad_norm}
