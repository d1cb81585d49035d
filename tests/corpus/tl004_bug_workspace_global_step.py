"""A workspace class keeps its step count in `self.global_step`, set to 0 in `__init__` and advanced at the end
of each batch of `run()`: the step test before it reads 0 on the first micro-batch."""
import torch
from torch import nn
from torch.utils.data import DataLoader

from workspaces.base import BaseWorkspace


class TrainWorkspace(BaseWorkspace):
    def __init__(self, cfg, output_dir=None):
        super().__init__(cfg, output_dir=output_dir)
        self.model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr)
        self.global_step = 0
        self.epoch = 0

    def run(self):
        cfg = self.cfg
        if cfg.resume:
            self.load_checkpoint()
        loader = DataLoader(self.dataset, batch_size=cfg.batch_size, shuffle=True)
        for _ in range(cfg.num_epochs):
            for batch in loader:
                loss = nn.functional.mse_loss(self.model(batch["x"]), batch["y"])
                (loss / cfg.accumulate_every).backward()
                if self.global_step % cfg.accumulate_every == 0:  # expect: TL004
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                self.global_step += 1
            self.epoch += 1
