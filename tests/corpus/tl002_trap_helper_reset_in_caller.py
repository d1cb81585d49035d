"""The loop resets through a helper of its own and `step_batch` does backward and step."""
import torch
from torch import nn


class Runner:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.criterion = nn.MSELoss()

    def clear(self):
        self.optimizer.zero_grad(set_to_none=True)

    def step_batch(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def run(self, loader):
        history = []
        for x, y in loader:
            self.clear()
            history.append(self.step_batch(x, y))
        return history
