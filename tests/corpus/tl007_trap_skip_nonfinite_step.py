"""The step is conditional, but on a finite loss, not on an accumulation window."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, log_every=100):
    bad_batches = 0
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        if torch.isfinite(loss):
            optimizer.step()
        else:
            bad_batches += 1
        if (i + 1) % log_every == 0:
            print(f"batch {i + 1}: loss={loss.item():.3f} skipped={bad_batches}")
