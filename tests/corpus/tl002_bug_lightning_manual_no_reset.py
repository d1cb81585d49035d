"""Lightning, manual optimisation: `training_step` backpropagates and steps but never resets."""
import lightning as L
import torch
from torch import nn


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.manual_backward(loss)
        opt.step()  # expect: TL002
        self.log("train_loss", loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
