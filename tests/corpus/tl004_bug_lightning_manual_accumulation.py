"""Lightning, manual optimisation with accumulation: `batch_idx` starts at 0."""
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
        if batch_idx % self.accumulate == 0:  # expect: TL004
            opt.step()
            opt.zero_grad()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
