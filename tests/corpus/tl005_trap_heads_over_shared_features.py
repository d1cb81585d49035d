"""One backward per head over features computed once: the next head needs the graph."""
import torch


def train(backbone, heads, criteria, loader, params):
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    for images, targets in loader:
        optimizer.zero_grad()
        features = backbone(images)
        for head, criterion, target in zip(heads, criteria, targets):
            head_loss = criterion(head(features), target)
            head_loss.backward(retain_graph=True)
        optimizer.step()
