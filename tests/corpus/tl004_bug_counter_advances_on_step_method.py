"""A hand-written trainer: backward in `training_step`, and `self.step_count` bumped only by a step."""
import torch


class Trainer:
    def __init__(self, model, criterion, grad_accum_steps=4):
        self.model = model
        self.criterion = criterion
        self.grad_accum_steps = grad_accum_steps
        self.step_count = 0
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def training_step(self, batch):
        x, y = batch
        loss = self.criterion(self.model(x), y) / self.grad_accum_steps
        loss.backward()
        return loss.detach()

    def train_epoch(self, loader):
        for batch_idx, batch in enumerate(loader):
            self.training_step(batch)
            if (self.step_count + 1) % self.grad_accum_steps == 0:  # expect: TL004
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.step_count += 1
