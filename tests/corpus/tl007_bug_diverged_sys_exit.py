"""A trainer that exits the process when the loss diverges; the gradients are cleared on every micro-batch."""
import logging
import sys

import torch

logger = logging.getLogger(__name__)


class Trainer:
    def __init__(self, model, loader, accumulation_steps=4):
        self.model = model
        self.loader = loader
        self.accumulation_steps = accumulation_steps
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.criterion = torch.nn.MSELoss()

    def train_epoch(self):
        for idx, (x, y) in enumerate(self.loader):
            loss = self.criterion(self.model(x), y) / self.accumulation_steps
            if torch.isnan(loss):
                logger.error("loss diverged at batch %d", idx)
                sys.exit(1)
            loss.backward()
            if (idx + 1) % self.accumulation_steps == 0 or idx + 1 == len(self.loader):
                self.optimizer.step()
            self.optimizer.zero_grad()  # expect: TL007
