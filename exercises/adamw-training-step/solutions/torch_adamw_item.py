# Style: the notebook's training loop turned into a method: torch.optim.AdamW, clip_grad_norm_, .item() for the logs and a debug print (the tensors returned).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.max_norm = max_norm
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=weight_decay)
        self.history = []

    def forward(self, x):
        return self.model(x)

    def train_step(self, x, targets):
        self.optimizer.zero_grad()
        logits = self.model(x)
        loss = F.cross_entropy(logits, targets)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.step()
        self.history.append(loss.item())
        print(f"step {len(self.history)}: loss {loss.item():.4f} grad_norm {grad_norm.item():.4f}")
        return {"loss": loss.detach(), "grad_norm": grad_norm}
