"""`self.global_step` (0 from `__init__`) is advanced before the step test: 1 on the first micro-batch, so the
first update comes after `accumulate_every` of them."""
import torch
from torch import nn


class Workspace:
    def __init__(self, cfg, model, loader):
        self.cfg = cfg
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.global_step = 0

    def run(self):
        for _ in range(self.cfg.num_epochs):
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.model(x), y) / self.cfg.accumulate_every
                loss.backward()
                self.global_step += 1
                if self.global_step % self.cfg.accumulate_every == 0:
                    self.optimizer.step()
                    self.optimizer.zero_grad()
