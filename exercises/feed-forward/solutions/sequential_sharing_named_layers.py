import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        # The statement's names first; the Sequential shares the very same layers, so
        # named_parameters() lists each weight once, under fc1 / fc2.
        self.fc1 = nn.Linear(d_model, expansion * d_model)
        self.fc2 = nn.Linear(expansion * d_model, d_model)
        self.net = nn.Sequential(self.fc1, nn.GELU(), self.fc2, nn.Dropout(dropout))

    def forward(self, x):
        return self.net(x)
