"""A helper of the file clears the gradients at the end of each micro-batch of the inner loop."""
import torch
import torch.nn.functional as F


def clear_grads(model):
    for p in model.parameters():
        p.grad = None


def train(model, batches, steps, accum):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        for _ in range(accum):
            x, y = next(batches)
            (F.cross_entropy(model(x), y) / accum).backward()
            clear_grads(model)  # expect: TL006
        optimizer.step()
