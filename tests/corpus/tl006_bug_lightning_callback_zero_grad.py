"""A callback clears the gradients in `on_after_backward`, which Lightning runs before the step."""
import lightning as L
import torch
from torch import nn


class ClearGrads(L.Callback):
    def on_after_backward(self, trainer, pl_module):
        for optimizer in trainer.optimizers:
            optimizer.zero_grad()  # expect: TL006


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 4)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


trainer = L.Trainer(max_epochs=3, accumulate_grad_batches=4, callbacks=[ClearGrads()])
