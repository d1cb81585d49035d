"""Lightning's own manual-optimisation accumulation recipe: `(batch_idx + 1) % N`, the loss divided."""
import lightning as L
import torch
from torch import nn


class Classifier(L.LightningModule):
    def __init__(self, accumulate=4):
        super().__init__()
        self.net = nn.Linear(16, 4)
        self.accumulate = accumulate
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y) / self.accumulate
        self.manual_backward(loss)
        if (batch_idx + 1) % self.accumulate == 0:
            opt.step()
            opt.zero_grad()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
