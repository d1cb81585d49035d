"""`i % N == 0` conditions that log, evaluate and save: not the step."""
import torch


def train(model, loader, optimizer, criterion, evaluate, log_every=100, eval_every=1000, save_every=5000):
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if i % log_every == 0:
            print(f"step {i}: loss {loss.item():.4f}")
        if i % eval_every == 0:
            evaluate(model)
        if i % save_every == 0 and i > 0:
            torch.save(model.state_dict(), f"ckpt_{i}.pt")
