# Style: the course's "write your own optimizer" cell: a torch.optim.Optimizer subclass with per-parameter state, updating p.data in place; the clipping by hand with torch.clamp.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MyAdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                p.data.mul_(1 - group["lr"] * group["weight_decay"])
                exp_avg.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** state["step"]
                bias_correction2 = 1 - beta2 ** state["step"]
                denom = (exp_avg_sq / bias_correction2).sqrt().add_(group["eps"])
                p.data.addcdiv_(exp_avg, denom, value=-group["lr"] / bias_correction1)


class Trainer(nn.Module):

    def __init__(self, d_in, d_hidden, d_out, lr, weight_decay, max_norm):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))
        self.max_norm = max_norm
        self.opt = MyAdamW(self.model.parameters(), lr=lr, weight_decay=weight_decay)

    def forward(self, x):
        return self.model(x)

    def clip(self):
        grads = [p.grad for p in self.model.parameters() if p.grad is not None]
        total = torch.sqrt(sum(torch.sum(g * g) for g in grads))
        coef = torch.clamp(self.max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef)
        return total

    def train_step(self, x, targets):
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self(x), targets)
        loss.backward()
        total = self.clip()
        self.opt.step()
        return {"grad_norm": total, "loss": loss}
