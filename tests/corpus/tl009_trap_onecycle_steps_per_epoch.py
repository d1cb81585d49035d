"""A trainer whose OneCycle schedule is built with `steps_per_epoch=len(train_loader)`: it counts
micro-batches, so stepping it after every micro-batch (the optimizer every `accum_iter`) is on time."""
import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import OneCycleLR
from tqdm import tqdm


class Trainer:
    def __init__(self, model, train_loader, epochs=30, accum_iter=4, max_lr=3e-3):
        self.model = model
        self.train_loader = train_loader
        self.accum_iter = accum_iter
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=max_lr)
        self.scheduler = OneCycleLR(self.optimizer, max_lr=max_lr, epochs=epochs,
                                    steps_per_epoch=len(train_loader))

    def train_one_epoch(self):
        self.model.train()
        for it, (images, targets) in enumerate(tqdm(self.train_loader)):
            loss = F.cross_entropy(self.model(images.cuda()), targets.cuda())
            (loss / self.accum_iter).backward()
            if (it + 1) % self.accum_iter == 0 or it + 1 == len(self.train_loader):
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.scheduler.step()
