"""The division happens inside `scaler.scale(...)`."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loader, accum_steps):
        self.model = model
        self.loader = loader
        self.accum_steps = accum_steps
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.scaler = torch.cuda.amp.GradScaler()

    def train_epoch(self):
        for batch_idx, (x, y) in enumerate(self.loader):
            with torch.autocast("cuda"):
                loss = self.criterion(self.model(x), y)
            self.scaler.scale(loss / self.accum_steps).backward()
            if (batch_idx + 1) % self.accum_steps == 0 or batch_idx == len(self.loader) - 1:
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad(set_to_none=True)
