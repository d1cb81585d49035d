"""The synchronisation context chosen before the forward and bound to a name."""
from contextlib import nullcontext

import torch
from torch.nn.parallel import DistributedDataParallel


class DistributedTrainer:
    def __init__(self, model, loader, rank, accumulation_steps):
        self.model = DistributedDataParallel(model.to(rank), device_ids=[rank])
        self.loader = loader
        self.accumulation_steps = accumulation_steps
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.criterion = torch.nn.MSELoss()

    def train_epoch(self):
        for step, (inputs, targets) in enumerate(self.loader):
            last = (step + 1) % self.accumulation_steps == 0 or step + 1 == len(self.loader)
            sync_context = nullcontext if last else self.model.no_sync
            with sync_context():
                loss = self.criterion(self.model(inputs), targets) / self.accumulation_steps
                loss.backward()
            if last:
                self.optimizer.step()
                self.optimizer.zero_grad()
