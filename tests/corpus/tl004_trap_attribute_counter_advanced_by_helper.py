"""`on_batch_start()`, another method, also advances `self.iteration`, before the step test: it is 1 on the
first micro-batch, not 0, so the first update does not come after one micro-batch."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, loader, accum):
        self.model = model
        self.loader = loader
        self.accum = accum
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        self.iteration = 0
        self.history = []

    def on_batch_start(self):
        self.iteration += 1
        self.history.append(self.iteration)

    def train_epoch(self):
        for x, y in self.loader:
            self.on_batch_start()
            loss = nn.functional.cross_entropy(self.model(x), y) / self.accum
            loss.backward()
            if self.iteration % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.iteration += 1
