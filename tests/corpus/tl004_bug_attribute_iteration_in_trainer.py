"""`self.iteration` set to 0 in the trainer's `__init__` and advanced after the step test inside `train()`."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, loader, args):
        self.model = model
        self.loader = loader
        self.args = args
        self.opt = torch.optim.Adam(model.parameters(), lr=args.lr)
        self.iteration = 0

    def train(self):
        self.model.train()
        while self.iteration < self.args.max_iters:
            for images, targets in self.loader:
                logits = self.model(images)
                loss = F.cross_entropy(logits, targets) / self.args.grad_accum
                loss.backward()
                if not self.iteration % self.args.grad_accum:  # expect: TL004
                    self.opt.step()
                    self.opt.zero_grad(set_to_none=True)
                self.iteration += 1
