"""AMP trainer: unscale and clip after every micro-batch, step and update once per window."""
import torch
from torch.nn.utils import clip_grad_norm_


class AmpTrainer:
    def __init__(self, model, loader, accum_steps, max_grad_norm=1.0):
        self.model = model
        self.loader = loader
        self.accum_steps = accum_steps
        self.max_grad_norm = max_grad_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
        self.scaler = torch.cuda.amp.GradScaler()
        self.criterion = torch.nn.CrossEntropyLoss(label_smoothing=0.1)

    def train_epoch(self):
        self.model.train()
        for i, (images, labels) in enumerate(self.loader):
            images, labels = images.cuda(), labels.cuda()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.criterion(self.model(images), labels) / self.accum_steps
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)  # expect: TL014
            clip_grad_norm_(self.model.parameters(), self.max_grad_norm)  # expect: TL014
            if (i + 1) % self.accum_steps == 0 or i + 1 == len(self.loader):
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad(set_to_none=True)
