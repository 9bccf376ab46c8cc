import torch


def cross_entropy(logits, targets, ignore_index=-100):
    # logits: (N, C) or (B, T, C), the classes on the last axis
    # targets: (N,) or (B, T), int64 class indices, or ignore_index where there is no target
    # return: a 0-d tensor, the mean over the kept targets of -log softmax(logits)[target]
    raise NotImplementedError
