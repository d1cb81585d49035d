"""`retain_graph=True` added "to be safe" on the only backward."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loader, lr=1e-3):
        self.model = model
        self.loader = loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def train_epoch(self):
        self.model.train()
        for x, y in self.loader:
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(x), y)
            loss.backward(retain_graph=True)  # expect: TL005
            self.optimizer.step()
