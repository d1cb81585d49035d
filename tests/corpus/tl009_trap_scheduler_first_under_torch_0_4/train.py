"""A segmentation trainer written for torch 0.4.1 (requirements.txt): back then the documented order was
`scheduler.step()` first, then the batch's update; nothing was skipped and nothing warned."""
import torch
import torch.nn.functional as F


def train(model, loader, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20000, 40000])
    step = 0
    while step < cfg.max_iters:
        for images, labels in loader:
            step += 1
            scheduler.step()
            model.train()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
