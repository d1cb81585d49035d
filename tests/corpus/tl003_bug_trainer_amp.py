"""Classifier trainer with AMP and an accumulation count from the config."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, cfg, model, loader):
        self.cfg = cfg
        self.model = model
        self.loader = loader
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.train.lr, momentum=0.9)
        self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)
        self.accum_steps = cfg.train.accum

    def train_one_epoch(self, epoch):
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        for i, (images, targets) in enumerate(self.loader):
            with torch.autocast("cuda", enabled=self.cfg.train.amp):
                logits = self.model(images)
                loss = self.criterion(logits, targets)
            self.scaler.scale(loss).backward()  # expect: TL003
            if (i + 1) % self.accum_steps == 0 or (i + 1) == len(self.loader):
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad(set_to_none=True)
