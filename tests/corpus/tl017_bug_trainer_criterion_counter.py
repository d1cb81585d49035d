"""A translation trainer: the criterion ignores padding, and a micro-batch counter closes each window."""
import torch
import torch.nn as nn


class Seq2SeqTrainer:
    def __init__(self, model, pad_id, accumulate=4, lr=5e-4):
        self.model = model
        self.criterion = nn.CrossEntropyLoss(ignore_index=pad_id, label_smoothing=0.1)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))
        self.accumulate = accumulate

    def train_epoch(self, loader):
        micro = 0
        for src, tgt in loader:
            logits = self.model(src, tgt[:, :-1])
            loss = self.criterion(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
            loss /= self.accumulate  # expect: TL017
            loss.backward()
            micro += 1
            if micro == self.accumulate:  # expect: TL010
                self.optimizer.step()
                self.optimizer.zero_grad()
                micro = 0
