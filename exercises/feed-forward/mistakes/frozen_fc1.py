import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        # keep the expansion fixed, like a random-features layer
        for p in self.fc1.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.dropout(self.fc2(nn.functional.gelu(self.fc1(x))))
