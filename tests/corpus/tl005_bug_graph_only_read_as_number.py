"""The retained backward's loss is added up only as a number: nothing outlives the iteration with its graph."""
import torch.nn.functional as F


def train(model, optimizer, loader):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward(retain_graph=True)  # expect: TL005
        optimizer.step()
        total = total + loss.item()
    return total / len(loader)
