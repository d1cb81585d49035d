"""A new head is built every iteration, but it wraps the backbone built before the loop: the backbone's gradients are never reset."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def finetune_heads(backbone, loader, classes, dim):
    backbone = backbone.train()
    features = backbone
    for images, labels in loader:
        model = nn.Sequential(features, nn.Linear(dim, classes))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()  # expect: TL002
