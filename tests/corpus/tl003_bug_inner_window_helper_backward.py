"""A trainer whose micro-batch method runs the forward and backward; the window's loop steps after it."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, loader, grad_accum):
        self.model = model
        self.batches = iter(loader)
        self.grad_accum = grad_accum
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def micro_step(self, batch):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()  # expect: TL003
        return loss.item()

    def train_step(self):
        for _ in range(self.grad_accum):
            self.micro_step(next(self.batches))
        self.optimizer.step()
        self.optimizer.zero_grad()
