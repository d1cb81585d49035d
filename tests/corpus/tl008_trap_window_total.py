"""A running loss for the log line of each update, reset whenever the optimizer steps: one window at most."""
import torch


def train(model, dataloader, optimizer, loss_fn, accum, log):
    running_loss = 0
    for epoch in range(2):
        for idx, batch in enumerate(dataloader):
            loss = loss_fn(model(batch["x"]), batch["y"]) / accum
            running_loss += loss
            loss.backward()
            if (idx + 1) % accum == 0 or idx + 1 == len(dataloader):
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                log(running_loss.item())
                running_loss = 0
