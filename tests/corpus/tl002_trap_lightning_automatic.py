"""Lightning under automatic optimisation: the trainer resets and steps; `training_step` only returns."""
import lightning as L
import torch
from torch import nn


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.log("loss", outputs["loss"])

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
