"""Manual optimisation: Lightning does not scale, so dividing by the count by hand is right."""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class LitClassifier(L.LightningModule):
    def __init__(self, accumulate=4):
        super().__init__()
        self.accumulate = accumulate
        self.net = nn.Linear(32, 10)
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = F.cross_entropy(self.net(x), y) / self.accumulate
        self.manual_backward(loss)
        if (batch_idx + 1) % self.accumulate == 0:
            opt.step()
            opt.zero_grad()
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


trainer = L.Trainer(accumulate_grad_batches=1)
