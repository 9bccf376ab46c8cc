import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        keep_prob = 1 - dropout
        self.dropout = nn.Dropout(keep_prob)

    def forward(self, x):
        return self.dropout(self.fc2(nn.functional.gelu(self.fc1(x))))
