"""Trainer with a per-step OneCycle schedule, stepped before the scaler steps the optimizer."""
import torch
from torch.optim.lr_scheduler import OneCycleLR


class Trainer:
    def __init__(self, model, train_loader, epochs, max_lr=1e-3):
        self.model = model
        self.train_loader = train_loader
        self.criterion = torch.nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=max_lr)
        self.scheduler = OneCycleLR(self.optimizer, max_lr=max_lr, epochs=epochs,
                                    steps_per_epoch=len(train_loader))
        self.scaler = torch.cuda.amp.GradScaler()

    def train_one_epoch(self):
        self.model.train()
        for images, labels in self.train_loader:
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.criterion(self.model(images), labels)
            self.scaler.scale(loss).backward()
            self.scheduler.step()  # expect: TL009
            self.scaler.step(self.optimizer)
            self.scaler.update()
