"""The fp16 branch reads `amp`, which only `__init__` binds (as its own local): it raises NameError before its
clip can run, so no clip runs on every micro-batch; the live branch clips once per window, at the step."""
import torch
from torch.nn.utils import clip_grad_norm_


class Trainer:
    def __init__(self, args, model, optimizer):
        if args.fp16:
            from apex import amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.args = args
        self.model = model
        self.optimizer = optimizer

    def train_epoch(self, loader):
        self.optimizer.zero_grad()
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(self.model(x), y) / self.args.gradient_accumulation_steps
            if self.args.fp16:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
                clip_grad_norm_(amp.master_params(self.optimizer), self.args.grad_clip)
            else:
                loss.backward()
            if (step + 1) % self.args.gradient_accumulation_steps == 0 or step + 1 == len(loader):
                clip_grad_norm_(self.model.parameters(), self.args.grad_clip)
                self.optimizer.step()
                self.optimizer.zero_grad()
