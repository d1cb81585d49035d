"""Iteration-based trainer: `not it % accum` with `it` from `range`."""
import torch
import torch.nn as nn


class IterTrainer:
    def __init__(self, model, loader, max_iters, accum):
        self.model = model
        self.loader = loader
        self.max_iters = max_iters
        self.accum = accum
        self.loss_fn = nn.L1Loss()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)

    def run(self):
        data = iter(self.loader)
        for it in range(self.max_iters):
            lr_img, hr_img = next(data)
            loss = self.loss_fn(self.model(lr_img), hr_img) / self.accum
            loss.backward()
            if not it % self.accum:  # expect: TL004, TL010
                self.optimizer.step()
                self.optimizer.zero_grad()
