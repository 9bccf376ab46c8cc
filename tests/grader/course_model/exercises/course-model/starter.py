import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self, dim: int, p: float = 0.5) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        raise NotImplementedError


def counts(ids: torch.Tensor, vocab: int) -> torch.Tensor:
    raise NotImplementedError
