"""A small trainer class with mixed precision, the way many projects write one.

Carries TL002: gradients are reset once before training, never inside the loop,
so every update applies the sum of all gradients since the start.
"""

import torch
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm


class Trainer:
    def __init__(self, model, train_loader, lr: float = 1e-3):
        self.model = model
        self.train_loader = train_loader
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=100)
        self.scaler = GradScaler()
        self.criterion = torch.nn.BCEWithLogitsLoss()

    def train_epoch(self) -> float:
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        running = 0.0
        for step, (features, labels) in enumerate(tqdm(self.train_loader)):
            with autocast():
                logits = self.model(features.cuda())
                loss = self.criterion(logits, labels.cuda())
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            running += loss.item()
        self.scheduler.step()
        return running / max(1, len(self.train_loader))
