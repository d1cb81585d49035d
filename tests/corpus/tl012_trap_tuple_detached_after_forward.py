"""Stateful LSTM forecaster: the `(h, c)` tuple is detached right after each forward pass."""
import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.lstm = nn.LSTM(n_in, n_hidden, batch_first=True)
        self.head = nn.Linear(n_hidden, 1)

    def forward(self, x, state=None):
        out, state = self.lstm(x, state)
        return self.head(out[:, -1]), state


def train(model, windows, epochs=20):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        state = None
        for x, y in windows:
            pred, state = model(x, state)
            state = (state[0].detach(), state[1].detach())
            loss = criterion(pred.squeeze(-1), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
