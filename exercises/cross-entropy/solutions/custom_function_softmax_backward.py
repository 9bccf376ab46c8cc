import torch


class SoftmaxCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy over the kept rows, with the textbook gradient (softmax - one_hot) / K."""

    @staticmethod
    def forward(ctx, logits, targets, keep):
        shifted = logits - logits.max(dim=1, keepdim=True).values
        log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
        count = keep.sum()
        picked = log_probs.gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
        loss = -(picked * keep).sum() / count
        ctx.save_for_backward(log_probs, targets, keep, count)
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        log_probs, targets, keep, count = ctx.saved_tensors
        grad = log_probs.exp()
        grad[torch.arange(grad.shape[0]), targets.clamp(min=0)] -= 1
        grad = grad * keep.unsqueeze(1) / count
        return grad * grad_loss, None, None


def cross_entropy(logits, targets, ignore_index=-100):
    C = logits.shape[-1]
    flat_targets = targets.reshape(-1)
    keep = (flat_targets != ignore_index).to(logits.dtype)
    return SoftmaxCrossEntropy.apply(logits.reshape(-1, C), flat_targets, keep)
