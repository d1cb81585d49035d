"""The Accelerator reads its count from the `accelerate` section the trainer narrowed `cfg` to, while the loss
is divided by the top-level config's `grad_accum`: two different settings, so nothing says the count is
divided twice."""
from accelerate import Accelerator


class Trainer:
    def __init__(self, cfg, model, optimizer, loader, criterion):
        self.cfg = cfg
        cfg = cfg.accelerate
        self.accelerator = Accelerator(gradient_accumulation_steps=cfg.grad_accum)
        self.model, self.optimizer, self.loader = self.accelerator.prepare(model, optimizer, loader)
        self.criterion = criterion

    def fit(self):
        for x, y in self.loader:
            with self.accelerator.accumulate(self.model):
                loss = self.criterion(self.model(x), y, reduction="sum")
                loss /= self.cfg.grad_accum
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
