# Style: the optimizer made on the first call of step (then kept), zero_grad(set_to_none=False), the loss returned with its graph, a (loss, norm) tuple in the outputs' order.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.lr = lr
        self.weight_decay = weight_decay
        self.max_norm = max_norm
        self.optimizer = None

    def forward(self, x):
        return self.model(x)

    def configure_optimizer(self):
        return torch.optim.AdamW(
            self.parameters(), lr=self.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=self.weight_decay
        )

    def train_step(self, x, targets):
        if self.optimizer is None:
            self.optimizer = self.configure_optimizer()
        self.optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(self(x), targets, reduction="mean")
        loss.backward()
        norm = nn.utils.clip_grad_norm_(self.parameters(), max_norm=self.max_norm, norm_type=2.0)
        self.optimizer.step()
        return loss, norm
