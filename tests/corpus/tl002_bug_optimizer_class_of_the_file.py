"""An optimizer written in this file (a torch `Optimizer` subclass): its `step()` reads the gradients,
and nothing in the loop resets them."""
import torch
from torch import nn


class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


def fit(loader, epochs=3):
    model = nn.Linear(8, 2)
    descent = PlainSGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for inputs, targets in loader:
            loss = criterion(model(inputs), targets)
            loss.backward()
            descent.step()  # expect: TL002
