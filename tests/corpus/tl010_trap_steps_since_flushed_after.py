"""A window counted since the last step, and a step after the batch loop for the micro-batches left over."""
import torch


def train(model, optimizer, train_loader, epochs, accumulate):
    nb = len(train_loader)
    last_opt_step = -1
    for epoch in range(epochs):
        optimizer.zero_grad()
        for i, (x, y) in enumerate(train_loader):
            ni = i + nb * epoch
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
            loss.backward()
            if ni - last_opt_step >= accumulate:
                optimizer.step()
                optimizer.zero_grad()
                last_opt_step = ni
        optimizer.step()
        optimizer.zero_grad()
        last_opt_step = nb * (epoch + 1) - 1
