"""An optimizer wrapper with AMP: `update` backpropagates the scaled loss and, when `step` holds, unscales,
clips, steps and resets."""
import torch


class AmpOptimWrapper:
    def __init__(self, optimizer, clip=1.0):
        self.optimizer = optimizer
        self.clip = clip
        self.scaler = torch.cuda.amp.GradScaler()

    def update(self, loss, params, step=True):
        self.scaler.scale(loss).backward()
        if step:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(params, self.clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
