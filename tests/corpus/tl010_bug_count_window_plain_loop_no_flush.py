"""A micro-batch count set to 0 once, before the epochs, over a plain `for x, y in dataloader:` (no counter of the
loop's own): the last epoch's partial window is never applied; no condition to extend, a step after the epochs is
the way out."""
import torch


def train(model, dataloader, epochs, accum_grad):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    forward_count = 0
    for epoch in range(epochs):
        for x, y in dataloader:
            loss = model(x, y).mean() / accum_grad
            loss.backward()
            forward_count += 1
            if forward_count != accum_grad:  # expect: TL010
                continue
            forward_count = 0
            optimizer.step()
            optimizer.zero_grad()
