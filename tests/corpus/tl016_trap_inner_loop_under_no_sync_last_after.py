"""Every chunk but the last is backpropagated under `no_sync()`; the last one, outside it, syncs the window."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train_step(model: DDP, optimizer, criterion, images, labels, chunks=4):
    pieces = list(zip(images.chunk(chunks), labels.chunk(chunks)))
    with model.no_sync():
        for x, y in pieces[:-1]:
            (criterion(model(x), y) / chunks).backward()
    x, y = pieces[-1]
    (criterion(model(x), y) / chunks).backward()
    optimizer.step()
    optimizer.zero_grad()


def main(net, rank, loader):
    model = DDP(net, device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = torch.nn.CrossEntropyLoss()
    for images, labels in loader:
        train_step(model, optimizer, criterion, images, labels)
