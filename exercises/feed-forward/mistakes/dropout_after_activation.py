import torch.nn as nn
import torch.nn.functional as F


class FeedForward(nn.Module):
    "Implements FFN equation (the Annotated Transformer's PositionwiseFeedForward)."

    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_model * expansion)
        self.fc2 = nn.Linear(d_model * expansion, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.fc2(self.dropout(F.gelu(self.fc1(x))))
