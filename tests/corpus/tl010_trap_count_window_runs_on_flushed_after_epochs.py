"""A micro-batch count set to 0 once, before the epochs, and set back to 0 at each step: windows run on from
epoch to epoch, and the step after the epochs' loop applies the last one."""
import torch


def train(model, dataloader, epochs, accum_grad):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    forward_count = 0
    for epoch in range(epochs):
        for x, y in dataloader:
            loss = model(x, y).mean() / accum_grad
            loss.backward()
            forward_count += 1
            if forward_count != accum_grad:
                continue
            forward_count = 0
            optimizer.step()
            optimizer.zero_grad()
    if forward_count:
        optimizer.step()
        optimizer.zero_grad()
