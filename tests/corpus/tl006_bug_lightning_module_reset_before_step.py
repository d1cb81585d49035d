"""The module logs its gradient norm before each step and then clears the gradients the step needs."""
import pytorch_lightning as pl
import torch
from torch import nn


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def on_before_optimizer_step(self, optimizer):
        norm = torch.nn.utils.clip_grad_norm_(self.parameters(), float("inf"))
        self.log("grad_norm", norm)
        self.zero_grad()  # expect: TL006

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)
