"""The counter in `self.n_iter` is advanced after the test: the first update comes after one micro-batch."""
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
        loss = self.criterion(self.model(inputs), labels) / self.accum
        loss.backward()
        if self.n_iter % self.accum == 0:  # expect: TL004, TL010
            self.opt.step()
            self.opt.zero_grad()
        self.n_iter += 1
        return loss.item()

    def end_epoch(self):
        self.n_iter = 0


def train(learner, loader, epochs):
    for epoch in range(epochs):
        for inputs, labels in loader:
            learner.optimize(inputs, labels)
        learner.end_epoch()
