"""The project asks for `torch>=0.4`: installed today it runs a torch where the scheduler must step after
the optimizer, so stepping it first skips the schedule's first value."""
import torch
import torch.nn.functional as F


def train(model, loader, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20000, 40000])
    for images, labels in loader:
        scheduler.step()  # expect: TL009
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
