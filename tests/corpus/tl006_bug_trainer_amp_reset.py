"""Mixed-precision trainer that "cleans up" the gradients right before the scaler steps."""
import torch
import torch.nn as nn
from tqdm import tqdm


class Trainer:
    def __init__(self, model, train_loader, lr=3e-4, device="cuda"):
        self.device = device
        self.model = model.to(device)
        self.train_loader = train_loader
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=0.05)
        self.scaler = torch.cuda.amp.GradScaler()

    def train_epoch(self, epoch):
        self.model.train()
        progress = tqdm(self.train_loader, desc=f"epoch {epoch}")
        for images, targets in progress:
            images = images.to(self.device, non_blocking=True)
            targets = targets.to(self.device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = self.model(images)
                loss = self.criterion(logits, targets)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.zero_grad(set_to_none=True)  # expect: TL006
            self.scaler.step(self.optimizer)
            self.scaler.update()
            progress.set_postfix(loss=loss.item())
