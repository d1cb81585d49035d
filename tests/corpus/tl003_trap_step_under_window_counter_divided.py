"""The step runs when a counter of the accumulation windows reaches a multiple of `updates_per_step`: a window of
`accum * updates_per_step` micro-batches, and the loss is divided by exactly that; the clip runs where the step
does."""
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, epochs, accum, updates_per_step):
    micro, windows = 0, 0
    for epoch in range(epochs):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            (loss / (accum * updates_per_step)).backward()
            micro += 1
            if micro % accum == 0:
                windows += 1
                if windows % updates_per_step == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    optimizer.zero_grad()
    optimizer.step()
    optimizer.zero_grad()
