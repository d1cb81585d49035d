"""Deep supervision done right: sum the stage losses, then one backward."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loader, lr=0.01):
        self.model = model
        self.loader = loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def train_epoch(self):
        self.model.train()
        for images, target in self.loader:
            self.optimizer.zero_grad()
            outputs = self.model(images)
            loss = torch.zeros((), device=images.device)
            for stage_output in outputs:
                loss = loss + self.criterion(stage_output, target)
            loss.backward()
            self.optimizer.step()
