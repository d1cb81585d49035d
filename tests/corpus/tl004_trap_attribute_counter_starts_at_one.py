"""`self.global_step` starts at 1 in `__init__` and is advanced after the test: the first update comes after
`accumulate_every` micro-batches, as it should."""
import torch
from torch import nn


class Workspace:
    def __init__(self, cfg, model, loader):
        self.cfg = cfg
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.global_step = 1

    def run(self):
        for _ in range(self.cfg.num_epochs):
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.model(x), y) / self.cfg.accumulate_every
                loss.backward()
                if self.global_step % self.cfg.accumulate_every == 0:
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                self.global_step += 1
