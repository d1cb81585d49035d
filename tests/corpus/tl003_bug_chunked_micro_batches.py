"""Micro-batches from `chunk`: each chunk's mean loss is backpropagated whole."""
import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, chunks=4):
    for images, targets in loader:
        optimizer.zero_grad(set_to_none=True)
        for x, y in zip(images.chunk(chunks), targets.chunk(chunks)):
            loss = F.cross_entropy(model(x), y)
            loss.backward()  # expect: TL003
        optimizer.step()
