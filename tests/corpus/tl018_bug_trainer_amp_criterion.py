"""A trainer whose criterion was switched to per-sample losses for logging hard examples."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.criterion = nn.CrossEntropyLoss(reduction="none", label_smoothing=0.1)
        self.scaler = torch.cuda.amp.GradScaler()

    def train_epoch(self, loader, hard_examples):
        for images, labels in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                losses = self.criterion(self.model(images), labels)
            hard_examples.extend(losses.detach().topk(4).indices.tolist())
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(losses).backward()  # expect: TL018
            self.scaler.step(self.optimizer)
            self.scaler.update()
