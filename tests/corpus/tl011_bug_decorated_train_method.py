"""The evaluation method's decorator was copied onto the training method above it."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_loader, val_loader, lr=1e-3):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    @torch.no_grad()
    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(x), y)
            loss.backward()  # expect: TL011
            self.optimizer.step()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        correct = 0
        for x, y in self.val_loader:
            correct += (self.model(x).argmax(1) == y).sum().item()
        return correct / len(self.val_loader.dataset)
