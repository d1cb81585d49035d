"""Another method of the class sets `self.step` from the trainer's own count, and the loop calls it on every
batch before the test: what `self.step` holds on the first micro-batch is not known here."""
import torch
from torch import nn


class Agent:
    def __init__(self, model, trainer, accum):
        self.model = model
        self.trainer = trainer
        self.accum = accum
        self.optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
        self.step = 0

    def sync_step(self):
        self.step = self.trainer.global_step

    def learn(self, loader):
        for obs, target in loader:
            self.sync_step()
            loss = nn.functional.smooth_l1_loss(self.model(obs), target) / self.accum
            loss.backward()
            if self.step % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.step += 1
