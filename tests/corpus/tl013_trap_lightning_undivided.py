"""Lightning divides by `accumulate_grad_batches` itself: `training_step` returns the plain mean."""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class LitClassifier(L.LightningModule):
    def __init__(self, n_heads=2):
        super().__init__()
        self.n_heads = n_heads
        self.heads = nn.ModuleList(nn.Linear(32, 10) for _ in range(n_heads))

    def training_step(self, batch, batch_idx):
        x, y = batch
        total = sum(F.cross_entropy(head(x), y) for head in self.heads)
        return total / self.n_heads

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


trainer = L.Trainer(accumulate_grad_batches=4)
