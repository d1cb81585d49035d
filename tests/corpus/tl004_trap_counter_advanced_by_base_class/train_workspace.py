"""`begin_batch()` of the base class (another file) also advances `self.global_step`, before the step test: it
is 1 on the first micro-batch, not 0, so the first update does not come after one micro-batch."""
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
        for x, y in self.loader:
            self.begin_batch()
            loss = nn.functional.mse_loss(self.model(x), y) / cfg.accumulate_every
            loss.backward()
            if self.global_step % cfg.accumulate_every == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.global_step += 1
