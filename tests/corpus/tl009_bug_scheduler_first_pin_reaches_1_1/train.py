"""requirements.txt pins torch 1.0.1, but setup.py allows up to 1.1.x: installed with pip, the project may
run on torch 1.1, where stepping the scheduler first skips the schedule's first value."""
import torch
import torch.nn.functional as F


def train(model, loader, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1000)
    for images, labels in loader:
        scheduler.step()  # expect: TL009
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
