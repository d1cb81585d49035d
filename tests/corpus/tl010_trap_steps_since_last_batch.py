"""A window counted since the last step that also steps on the epoch's last micro-batch."""
import torch


def train(model, optimizer, loader, epochs, accumulate):
    nb = len(loader)
    last_opt_step = -1
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            ni = i + nb * epoch
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
            loss.backward()
            if ni - last_opt_step >= accumulate or i == nb - 1:
                optimizer.step()
                optimizer.zero_grad()
                last_opt_step = ni
