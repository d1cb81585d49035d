"""Trainer with AMP accumulation; an epoch's last partial window is left in `.grad`."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_loader, accum_steps, epochs):
        self.model = model
        self.train_loader = train_loader
        self.accum_steps = accum_steps
        self.epochs = epochs
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
        self.scaler = torch.cuda.amp.GradScaler()

    def fit(self):
        for epoch in range(self.epochs):
            self.model.train()
            for i, (x, y) in enumerate(self.train_loader):
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = self.criterion(self.model(x), y) / self.accum_steps
                self.scaler.scale(loss).backward()
                if (i + 1) % self.accum_steps == 0:  # expect: TL010
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad(set_to_none=True)
