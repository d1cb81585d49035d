"""A learner keeps its micro-batch counter in `self.n_iter`; `optimize()` steps every `accum` calls."""
import torch
from torch import nn


class Learner:
    def __init__(self, model, accum=4):
        self.model = model
        self.accum = accum
        self.n_iter = 0
        self.criterion = nn.CrossEntropyLoss()
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def optimize(self, inputs, labels):
        loss = self.criterion(self.model(inputs), labels)
        loss.backward()  # expect: TL003
        self.n_iter += 1
        if self.n_iter % self.accum == 0:  # expect: TL010
            self.opt.step()
            self.opt.zero_grad()
        return loss.item()

    def end_epoch(self):
        self.n_iter = 0


def train(learner, loader, epochs):
    for epoch in range(epochs):
        for inputs, labels in loader:
            learner.optimize(inputs, labels)
        learner.end_epoch()
