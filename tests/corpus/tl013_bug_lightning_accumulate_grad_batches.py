"""Lightning, automatic optimisation with `accumulate_grad_batches`: the step divides the loss again."""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class LitClassifier(L.LightningModule):
    def __init__(self, accumulate=8):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss / self.hparams.accumulate  # expect: TL013

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


def main(train_loader, accumulate=8):
    model = LitClassifier(accumulate=accumulate)
    trainer = L.Trainer(max_epochs=5, accumulate_grad_batches=accumulate)
    trainer.fit(model, train_loader)
