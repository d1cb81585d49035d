"""CosineAnnealingWarmRestarts stepped with a fractional epoch, as its documentation shows."""
import torch
from torch.optim.lr_scheduler import CosineAnnealingWarmRestarts


def train(net, dataloader, criterion, epochs=20):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    scheduler = CosineAnnealingWarmRestarts(optimizer, T_0=10, T_mult=2)
    iters = len(dataloader)
    for epoch in range(epochs):
        for i, sample in enumerate(dataloader):
            inputs, labels = sample["inputs"], sample["labels"]
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            scheduler.step(epoch + i / iters)
