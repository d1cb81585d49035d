"""Mixed precision when a scaler is given, plain backward otherwise: the loss is not divided by
`accumulation_steps` on either path (one bug, one finding, at the first backward)."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, lr=1e-3, accumulation_steps=8, fp16=False):
        self.model = model
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.scaler = torch.cuda.amp.GradScaler() if fp16 else None
        self.accumulation_steps = accumulation_steps

    def train_epoch(self, loader):
        for step, (inputs, labels) in enumerate(loader):
            with torch.autocast("cuda", enabled=self.scaler is not None):
                loss = self.criterion(self.model(inputs), labels)
            if self.scaler is not None:
                self.scaler.scale(loss).backward()  # expect: TL003
            else:
                loss.backward()
            if (step + 1) % self.accumulation_steps == 0 or step + 1 == len(loader):
                if self.scaler is not None:
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                else:
                    self.optimizer.step()
                self.optimizer.zero_grad()
