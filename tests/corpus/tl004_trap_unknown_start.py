"""Resumed training: the counter starts where the checkpoint stopped, so nothing is known."""
import torch


def resume(model, loader, optimizer, criterion, start_step, accum):
    state = torch.load("last.pt")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    for step, (x, y) in enumerate(loader, start=start_step):
        loss = criterion(model(x), y) / accum
        loss.backward()
        if step % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
