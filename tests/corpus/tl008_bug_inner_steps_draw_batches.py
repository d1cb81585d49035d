"""An epoch of a fixed number of steps, each drawing its batch from an iterator, the losses summed into a total
that is reset only once per epoch."""
import torch.nn.functional as F


def train(model, optimizer, loader, epochs, steps_per_epoch):
    for epoch in range(epochs):
        it = iter(loader)
        total = 0.0
        for _ in range(steps_per_epoch):
            x, y = next(it)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss  # expect: TL008
        print(epoch, total / steps_per_epoch)
