"""Hooks that reset only what they mean to: the frozen encoder's gradients after each backward, everything
during warm-up only, and the optimizer's reset where Lightning asks for it (after the step)."""
import lightning as L
import torch
from torch import nn


class Finetuner(L.LightningModule):
    def __init__(self, warmup_steps=100):
        super().__init__()
        self.encoder = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)
        self.warmup_steps = warmup_steps

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.head(self.encoder(x)), y)

    def on_after_backward(self):
        self.encoder.zero_grad()
        if self.trainer.global_step < self.warmup_steps:
            self.zero_grad()

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer):
        optimizer.zero_grad(set_to_none=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


class LogGradNorm(L.Callback):
    def on_before_zero_grad(self, trainer, pl_module, optimizer):
        optimizer.zero_grad()
