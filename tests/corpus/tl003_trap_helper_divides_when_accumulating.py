"""`training_step` divides only when it accumulates: dividing by 1 would change nothing."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, loader, accum_steps=1):
        self.model = model
        self.loader = loader
        self.accum_steps = accum_steps
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def training_step(self, batch):
        inputs, labels = batch
        loss = self.criterion(self.model(inputs), labels)
        if self.accum_steps > 1:
            loss = loss / self.accum_steps
        loss.backward()
        return loss.detach()

    def fit(self):
        for i, batch in enumerate(self.loader):
            self.training_step(batch)
            if (i + 1) % self.accum_steps == 0 or i + 1 == len(self.loader):
                self.optimizer.step()
                self.optimizer.zero_grad()
