"""A trainer whose `_update()` steps the optimizer through another method (`_optimizer_step()`, with AMP)
and then the scheduler: the scheduler follows the optimizer on every call."""
import torch


class Trainer:
    def __init__(self, model, criterion, lr=1e-3, total_steps=10000):
        self.model = model
        self.criterion = criterion
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(self.optimizer, max_lr=lr, total_steps=total_steps)
        self.scaler = torch.cuda.amp.GradScaler()

    def _optimizer_step(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def _update(self):
        self._optimizer_step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)

    def train_epoch(self, loader):
        self.model.train()
        for inputs, targets in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.criterion(self.model(inputs.cuda()), targets.cuda())
            self.scaler.scale(loss).backward()
            self._update()
