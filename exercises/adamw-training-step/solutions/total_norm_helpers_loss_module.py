# Style: nn.CrossEntropyLoss as a submodule, torch.nn.utils.get_total_norm and clip_grads_with_norm_ (the two halves of clip_grad_norm_), the optimizer over self.parameters().
import torch
from torch import nn
from torch.nn.utils import clip_grads_with_norm_, get_total_norm
from torch.optim import AdamW


class Trainer(nn.Module):
    def __init__(self, d_in: int, d_hidden: int, d_out: int, lr: float, weight_decay: float, max_norm: float):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.criterion = nn.CrossEntropyLoss()
        self.max_norm = max_norm
        self.optimizer = AdamW(self.parameters(), lr=lr, weight_decay=weight_decay)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def train_step(self, x: torch.Tensor, targets: torch.Tensor) -> dict:
        self.optimizer.zero_grad()
        loss = self.criterion(self(x), targets)
        loss.backward()
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        total_norm = get_total_norm(grads, norm_type=2.0)
        clip_grads_with_norm_(self.parameters(), self.max_norm, total_norm)
        self.optimizer.step()
        return {"loss": loss.detach(), "grad_norm": total_norm}
