"""Stateful model wrapper keeping its GRU state on `self`; the training loop never detaches it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulForecaster(nn.Module):
    def __init__(self, n_features, hidden_size=64):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, n_features)
        self.hidden = None

    def forward(self, x, hidden):
        y, hidden = self.gru(x, hidden)
        return self.out(y), hidden

    def fit(self, windows, epochs=5):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        for epoch in range(epochs):
            self.hidden = None
            for x, y in windows:
                pred, self.hidden = self(x, self.hidden)  # expect: TL012
                loss = F.mse_loss(pred, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
