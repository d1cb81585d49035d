"""OneCycle sized with `steps_per_epoch=len(train_loader) // accum_steps` (updates) but stepped after
every micro-batch: the cycle ends `accum_steps`× too early and OneCycleLR raises once it is over."""
import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import OneCycleLR


def train(model, train_loader, epochs=20, accum_steps=8):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = OneCycleLR(optimizer, max_lr=1e-3, epochs=epochs, steps_per_epoch=len(train_loader) // accum_steps)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(train_loader):
            loss = F.cross_entropy(model(x), y) / accum_steps
            loss.backward()
            if (step + 1) % accum_steps == 0 or step + 1 == len(train_loader):
                optimizer.step()
                optimizer.zero_grad()
            scheduler.step()  # expect: TL009
