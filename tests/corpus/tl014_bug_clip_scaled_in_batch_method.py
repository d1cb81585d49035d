"""A trainer's per-batch method clips AMP-scaled gradients: no `unscale_` before the clip."""
import torch


class Trainer:
    def __init__(self, model, optimizer, loader, max_norm=1.0, use_amp=True):
        self.model = model
        self.use_amp = use_amp
        self.optimizer = optimizer
        self.loader = loader
        self.max_norm = max_norm
        self.scaler = torch.amp.GradScaler("cuda")

    def run_batch(self, inputs, targets, train=True):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
            loss = self.model(inputs, targets)
        if train:
            self.optimizer.zero_grad(set_to_none=True)
            if self.use_amp:
                self.scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)  # expect: TL014
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
                self.optimizer.step()
        return loss.item()

    def run_epoch(self, loader, train=True):
        for inputs, targets in loader:
            self.run_batch(inputs, targets, train)
