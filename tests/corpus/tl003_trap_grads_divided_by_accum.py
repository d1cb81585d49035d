"""A mean loss backpropagated undivided, and the window's summed gradients divided by the accumulation
count once, just before the step: the same as dividing each micro-batch's loss."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, cfg):
    for epoch in range(cfg.epochs):
        for i, (images, labels) in enumerate(loader):
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            loss.backward()
            if (i + 1) % cfg.accum_steps == 0 or i + 1 == len(loader):
                for p in model.parameters():
                    if p.grad is not None:
                        p.grad.div_(cfg.accum_steps)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                optimizer.step()
                optimizer.zero_grad()


def average_gradients(model, count):
    for p in model.parameters():
        if p.grad is not None:
            p.grad /= count


def train_helper(model, loader, optimizer, accumulation_steps=4):
    for i, (images, labels) in enumerate(loader):
        F.cross_entropy(model(images), labels).backward()
        if (i + 1) % accumulation_steps == 0 or i + 1 == len(loader):
            average_gradients(model, accumulation_steps)
            optimizer.step()
            optimizer.zero_grad()
