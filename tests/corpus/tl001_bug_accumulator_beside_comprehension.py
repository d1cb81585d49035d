"""Head losses summed by a comprehension into a running loss, and that running sum backpropagated every batch."""
import torch.nn.functional as F


def train(backbone, heads, loader, optimizer):
    loss = 0
    for images, targets in loader:
        features = backbone(images)
        loss += sum(F.cross_entropy(h(features), targets) for h in heads)
        loss.backward()  # expect: TL001
        optimizer.step()
        optimizer.zero_grad()
