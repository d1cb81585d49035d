"""The Accelerator accumulates `cfg.train.grad_accum` micro-batches; the loss is averaged over the
`cfg.train.n_views` augmented views of each batch, another setting."""
from accelerate import Accelerator


class Trainer:
    def __init__(self, cfg, model, optimizer, loader, criterion):
        self.cfg = cfg
        self.accelerator = Accelerator(gradient_accumulation_steps=cfg.train.grad_accum)
        self.model, self.optimizer, self.loader = self.accelerator.prepare(model, optimizer, loader)
        self.criterion = criterion

    def fit(self):
        for views, y in self.loader:
            with self.accelerator.accumulate(self.model):
                loss = sum(self.criterion(self.model(x), y) for x in views)
                loss /= self.cfg.train.n_views
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
