"""Two heads on frozen features: the first head's step leaves the shared features' graph alone."""
import torch
import torch.nn as nn


def fit(backbone, cls_head, box_head, loader, epochs=1):
    cls_opt = torch.optim.SGD(cls_head.parameters(), lr=0.01, momentum=0.9)
    box_opt = torch.optim.SGD(box_head.parameters(), lr=0.01, momentum=0.9)
    ce = nn.CrossEntropyLoss()
    l1 = nn.SmoothL1Loss()
    for _ in range(epochs):
        for images, labels, boxes in loader:
            with torch.no_grad():
                features = backbone(images)
            features.requires_grad_(True)
            pooled = features.mean(dim=(2, 3))
            cls_opt.zero_grad()
            cls_loss = ce(cls_head(pooled), labels)
            cls_loss.backward(retain_graph=True)
            cls_opt.step()
            box_opt.zero_grad()
            box_loss = l1(box_head(pooled), boxes)
            box_loss.backward()
            box_opt.step()
