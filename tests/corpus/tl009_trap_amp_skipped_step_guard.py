"""AMP: the scheduler steps after the scaler, and only when the scaler did not skip the step."""
import torch


class Trainer:
    def __init__(self, model, loader, total_steps):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(self.optimizer, max_lr=5e-4, total_steps=total_steps)
        self.scaler = torch.cuda.amp.GradScaler()

    def train_epoch(self):
        for batch in self.loader:
            self.optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = self.model(**batch).loss
            self.scaler.scale(loss).backward()
            scale_before = self.scaler.get_scale()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            if scale_before <= self.scaler.get_scale():
                self.scheduler.step()
