"""A trainer builds its Accelerator from the config it keeps (`self.cfg`) and divides the loss by the same count."""
from accelerate import Accelerator


class Trainer:
    def __init__(self, cfg, model, optimizer, loader, criterion):
        self.cfg = cfg
        self.accelerator = Accelerator(gradient_accumulation_steps=cfg.train.grad_accum)
        self.model, self.optimizer, self.loader = self.accelerator.prepare(model, optimizer, loader)
        self.criterion = criterion

    def fit(self):
        for x, y in self.loader:
            with self.accelerator.accumulate(self.model):
                loss = self.criterion(self.model(x), y)
                loss /= self.cfg.train.grad_accum  # expect: TL013
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
