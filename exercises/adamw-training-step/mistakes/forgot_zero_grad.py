# Never zeroes the gradients: each backward adds to the last step's.
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
        loss = F.cross_entropy(self.model(x), targets)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.step()
        return {"loss": loss.detach(), "grad_norm": grad_norm}
