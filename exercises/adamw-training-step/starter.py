import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.max_norm = max_norm
        # TODO: the AdamW optimizer over self.model's parameters (lr, weight_decay), created once

    def forward(self, x):
        # x: (batch, d_in) -> logits: (batch, d_out)
        raise NotImplementedError

    def train_step(self, x, targets):
        # x: (batch, d_in), targets: (batch,) class indices
        # zero the gradients, cross-entropy loss, backward, clip the global gradient norm to
        # max_norm, AdamW update
        # return {"loss": loss before the update, "grad_norm": the global norm before clipping}
        raise NotImplementedError
