"""pytorch_lightning 1.x style: the loss in the returned dict is divided by the accumulation count."""
import pytorch_lightning as pl
import torch
from torch import nn


class Seq2Seq(pl.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        outputs = self.model(**batch)
        loss = outputs.loss / 4  # expect: TL013
        return {"loss": loss, "log": {"train_loss": outputs.loss.detach()}}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)


trainer = pl.Trainer(accumulate_grad_batches=4, max_steps=10_000)
