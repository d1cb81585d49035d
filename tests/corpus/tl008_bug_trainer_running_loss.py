"""Trainer that reports the epoch's mean loss; the running sum keeps every batch's graph."""
import torch
import torch.nn as nn
from tqdm import tqdm


class Trainer:
    def __init__(self, model, train_loader, device="cuda"):
        self.model = model.to(device)
        self.train_loader = train_loader
        self.device = device
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def train_epoch(self, epoch):
        self.model.train()
        running_loss = 0.0
        pbar = tqdm(self.train_loader, desc=f"train {epoch}")
        for inputs, labels in pbar:
            inputs, labels = inputs.to(self.device), labels.to(self.device)
            self.optimizer.zero_grad()
            outputs = self.model(inputs)
            loss = self.criterion(outputs, labels)
            loss.backward()
            self.optimizer.step()
            running_loss += loss  # expect: TL008
        return running_loss / len(self.train_loader)
