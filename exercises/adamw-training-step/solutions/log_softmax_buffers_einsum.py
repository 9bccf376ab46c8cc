# Style: everything by hand: the loss from log_softmax and gather, the moments as registered buffers (saved with the model, never trained), the step count a buffer too, one flat vector for the norm.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.lr, self.weight_decay, self.max_norm = lr, weight_decay, max_norm
        self.register_buffer("t", torch.zeros(()))
        for i, p in enumerate(self.model.parameters()):
            self.register_buffer(f"m{i}", torch.zeros_like(p))
            self.register_buffer(f"v{i}", torch.zeros_like(p))

    def forward(self, x):
        h = torch.tanh(torch.einsum("bi,hi->bh", x, self.model[0].weight) + self.model[0].bias)
        return torch.einsum("bh,oh->bo", h, self.model[2].weight) + self.model[2].bias

    def cross_entropy(self, logits, targets):
        log_probs = F.log_softmax(logits, dim=-1)
        return -log_probs.gather(1, targets.unsqueeze(1)).squeeze(1).mean()

    def train_step(self, x, targets):
        self.model.zero_grad()
        loss = self.cross_entropy(self(x), targets)
        loss.backward()
        params = list(self.model.parameters())
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        grad_norm = flat.pow(2).sum().sqrt()
        scale = min(1.0, self.max_norm / (grad_norm.item() + 1e-6))
        self.t += 1
        t = self.t.item()
        with torch.no_grad():
            for i, p in enumerate(params):
                g = p.grad * scale
                m, v = getattr(self, f"m{i}"), getattr(self, f"v{i}")
                m.mul_(0.9).add_(0.1 * g)
                v.mul_(0.999).add_(0.001 * g * g)
                p.mul_(1 - self.lr * self.weight_decay)
                p.sub_(self.lr * (m / (1 - 0.9**t)) / ((v / (1 - 0.999**t)).sqrt() + 1e-8))
        return dict(loss=loss, grad_norm=grad_norm)
