"""The gradients are clipped before the step, but nothing divides them (or the loss) by the accumulation
count: every step applies `accum_steps`× the large-batch gradient."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, accum_steps=8):
    for i, (images, labels) in enumerate(loader):
        loss = F.cross_entropy(model(images), labels)
        loss.backward()  # expect: TL003
        if (i + 1) % accum_steps == 0 or i + 1 == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
