import torch


class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets):
        log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
        ctx.save_for_backward(log_probs, targets)
        return -log_probs[torch.arange(len(targets)), targets].mean()

    @staticmethod
    def backward(ctx, grad_out):
        log_probs, targets = ctx.saved_tensors
        grad = log_probs.exp()
        grad[torch.arange(len(targets)), targets] -= 1
        return grad_out * grad, None  # softmax - one_hot


def cross_entropy(logits, targets, ignore_index=-100):
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    keep = targets != ignore_index
    return CrossEntropy.apply(logits[keep], targets[keep])
