"""A trainer keeps the recurrent state on `self`, None until the first batch, detached before reuse."""
import torch
import torch.nn as nn


class SequenceTrainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
        self.criterion = nn.MSELoss()
        self.hidden = None

    def train_epoch(self):
        for x, y in self.loader:
            if self.hidden is not None:
                self.hidden = [h.detach() for h in self.hidden]
            pred, self.hidden = self.model(x, self.hidden)
            loss = self.criterion(pred, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
