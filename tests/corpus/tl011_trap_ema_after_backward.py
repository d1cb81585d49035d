"""The loss is computed with gradients on; only the EMA update and metrics run under no_grad."""
import copy

import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loader, decay=0.999):
        self.model = model
        self.ema = copy.deepcopy(model).eval()
        self.loader = loader
        self.decay = decay
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_epoch(self):
        for step, (x, y) in enumerate(self.loader):
            logits = self.model(x)
            loss = self.criterion(logits, y)
            with torch.no_grad():
                acc = (logits.argmax(-1) == y).float().mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            with torch.inference_mode():
                for ema_p, p in zip(self.ema.parameters(), self.model.parameters()):
                    ema_p.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)
            if step % 100 == 0:
                print(step, loss.item(), acc.item())
