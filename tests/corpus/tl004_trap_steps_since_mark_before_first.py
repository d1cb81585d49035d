"""`ni - last_opt_step >= accumulate` with the mark at -1 before the first micro-batch (0): the first step
comes after `accumulate` micro-batches, like every other one. The epoch's left-over micro-batches are
stepped after the loop."""
import torch


def train(model, optimizer, loader, epochs, accumulate):
    nb = len(loader)
    last_opt_step = -1
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            ni = i + nb * epoch
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
            loss.backward()
            if ni - last_opt_step >= accumulate:
                optimizer.step()
                optimizer.zero_grad()
                last_opt_step = ni
        if nb % accumulate:
            optimizer.step()
            optimizer.zero_grad()
            last_opt_step = nb * (epoch + 1) - 1
