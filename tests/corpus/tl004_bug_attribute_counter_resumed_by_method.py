"""`load_checkpoint()` writes the step count back from a checkpoint, but only when resuming: a fresh run starts
at the 0 of `__init__`, and the step test reads it before the count advances."""
import torch
from torch import nn


class Trainer:
    def __init__(self, cfg, model, loader):
        self.cfg = cfg
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
        self.step = 0

    def load_checkpoint(self, path):
        payload = torch.load(path, map_location="cpu")
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.step = payload["step"]

    def fit(self):
        if self.cfg.resume_from:
            self.load_checkpoint(self.cfg.resume_from)
        for epoch in range(self.cfg.epochs):
            for x, y in self.loader:
                loss = nn.functional.cross_entropy(self.model(x), y)
                (loss / self.cfg.grad_accum).backward()
                if self.step % self.cfg.grad_accum == 0:  # expect: TL004
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                self.step += 1
