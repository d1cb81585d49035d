"""AMP accumulation: reset opens each window before backward, the step closes it."""
import torch
from torch.cuda.amp import GradScaler, autocast


class Trainer:
    def __init__(self, model, loader, accum_steps=8):
        self.model = model
        self.loader = loader
        self.accum_steps = accum_steps
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.scaler = GradScaler()
        self.criterion = torch.nn.CrossEntropyLoss()

    def fit_epoch(self):
        for i, (x, y) in enumerate(self.loader):
            if i % self.accum_steps == 0:
                self.optimizer.zero_grad(set_to_none=True)
            with autocast():
                loss = self.criterion(self.model(x), y) / self.accum_steps
            self.scaler.scale(loss).backward()
            if (i + 1) % self.accum_steps == 0 or (i + 1) == len(self.loader):
                self.scaler.step(self.optimizer)
                self.scaler.update()
