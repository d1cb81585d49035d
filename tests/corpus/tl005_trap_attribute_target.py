"""A reconstruction trainer whose target tensor is stored on the instance by the caller: its graph state is not shown here."""
import torch
import torch.nn as nn


class Reconstructor:
    def __init__(self, model, target, steps=100):
        self.model = model
        self.target = target
        self.steps = steps
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def run(self, code):
        for _ in range(self.steps):
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(code), self.target)
            loss.backward(retain_graph=True)
            self.optimizer.step()
