"""`step % accum == accum - 1` steps at the end of each full window; the partial one at the end of the epoch is left."""
import torch
from torch import nn


class Finetuner:
    def __init__(self, model, train_loader, accum=8):
        self.model = model
        self.train_loader = train_loader
        self.accum = accum
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    def epoch(self):
        self.model.train()
        for step, (tokens, labels) in enumerate(self.train_loader):
            logits = self.model(tokens)
            loss = self.criterion(logits.flatten(0, 1), labels.flatten()) / self.accum
            loss.backward()
            if step % self.accum == self.accum - 1:  # expect: TL010
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
