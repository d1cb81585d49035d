"""Stateful GRU trainer that passes a detached copy of the state into the model."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
        self.criterion = nn.MSELoss()

    def train_epoch(self, batch_size):
        hidden = torch.zeros(self.model.num_layers, batch_size, self.model.hidden_size)
        for x, y in self.loader:
            out, hidden = self.model(x, hidden.detach())
            loss = self.criterion(out, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
