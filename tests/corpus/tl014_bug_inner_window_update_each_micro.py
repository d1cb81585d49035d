"""A trainer whose micro-batch loop updates the loss scale after each micro-batch, the step after the loop."""
import torch
from torch.cuda.amp import GradScaler, autocast


class Trainer:
    def __init__(self, model, optimizer, accum_steps):
        self.model = model
        self.optimizer = optimizer
        self.accum_steps = accum_steps
        self.scaler = GradScaler()

    def step(self, batch_iter):
        for micro_step in range(self.accum_steps):
            batch = next(batch_iter)
            with autocast():
                loss = self.model(**batch).loss / self.accum_steps
            self.scaler.scale(loss).backward()
            self.scaler.update()  # expect: TL014
        self.scaler.step(self.optimizer)
        self.optimizer.zero_grad()
