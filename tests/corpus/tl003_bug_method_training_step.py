"""A trainer class: `training_step` runs forward and backward, `fit` steps every `accum_steps` batches."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, loader, accum_steps=4):
        self.model = model
        self.loader = loader
        self.accum_steps = accum_steps
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def training_step(self, batch):
        inputs, labels = batch
        loss = self.criterion(self.model(inputs), labels)
        loss.backward()  # expect: TL003
        return loss.detach()

    def fit(self, epochs):
        for epoch in range(epochs):
            for i, batch in enumerate(self.loader):
                self.training_step(batch)
                if (i + 1) % self.accum_steps == 0 or i + 1 == len(self.loader):
                    self.optimizer.step()
                    self.optimizer.zero_grad()
