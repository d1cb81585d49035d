"""Image classifier trainer with mixed precision and a one-cycle schedule."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_loader, epochs, lr, device):
        self.device = device
        self.model = model.to(device)
        self.train_loader = train_loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(
            self.optimizer, max_lr=lr, total_steps=epochs * len(train_loader)
        )
        self.scaler = torch.cuda.amp.GradScaler()

    def train_epoch(self):
        self.model.train()
        for images, labels in self.train_loader:
            images, labels = images.to(self.device), labels.to(self.device)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = self.model(images)
                loss = self.criterion(logits, labels)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)  # expect: TL002
            self.scaler.update()
            self.scheduler.step()
