"""The workspace's `run()` tests `self.global_step`, which its base class (another file) sets to 0, before the
count advances: the first update comes after one micro-batch."""
import torch
from torch import nn

from workspace.base import BaseWorkspace


class TrainWorkspace(BaseWorkspace):
    def __init__(self, cfg, model, loader):
        super().__init__(cfg)
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)

    def run(self):
        cfg = self.cfg
        if cfg.resume:
            self.load_checkpoint(cfg.checkpoint)
        for _ in range(cfg.num_epochs):
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.model(x), y) / cfg.accumulate_every
                loss.backward()
                if self.global_step % cfg.accumulate_every == 0:  # expect: TL004
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                self.global_step += 1
            self.epoch += 1
