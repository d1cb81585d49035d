"""The step count skips the epoch's last batch (advanced after the validation instead), and the test is
`(global_step + 1) % N == 0`: the first update comes after N micro-batches."""
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
            for batch_idx, (x, y) in enumerate(self.loader):
                loss = nn.functional.mse_loss(self.model(x), y) / self.cfg.accumulate_every
                loss.backward()
                if (self.global_step + 1) % self.cfg.accumulate_every == 0:
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                if batch_idx != len(self.loader) - 1:
                    self.global_step += 1
            self.global_step += 1
