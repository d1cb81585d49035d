"""The trainer's `_after_step()` helper clears the gradients after every update of the inner-loop window."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, accum):
        self.model = model
        self.accum = accum
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def _after_step(self):
        self.optimizer.zero_grad(set_to_none=True)

    def fit(self, batches, steps):
        for step in range(steps):
            for _ in range(self.accum):
                x, y = next(batches)
                (F.cross_entropy(self.model(x), y) / self.accum).backward()
            self.optimizer.step()
            self._after_step()
