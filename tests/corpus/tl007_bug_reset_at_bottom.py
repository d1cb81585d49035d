"""The reset sits at the bottom of the iteration, outside the window's `if`."""
import torch
import torch.nn as nn


class SegTrainer:
    def __init__(self, model, loader, accumulate=4):
        self.model = model
        self.loader = loader
        self.accumulate = accumulate
        self.criterion = nn.CrossEntropyLoss(ignore_index=255)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)

    def train_epoch(self):
        self.model.train()
        for it, (image, mask) in enumerate(self.loader):
            logits = self.model(image)
            loss = self.criterion(logits, mask) / self.accumulate
            loss.backward()
            if (it + 1) % self.accumulate == 0 or it + 1 == len(self.loader):
                self.optimizer.step()
            self.optimizer.zero_grad()  # expect: TL007
