"""The optimizer's gradients are reset at the top of every micro-batch of the inner accumulation loop."""
import torch
import torch.nn.functional as F


def train(model, loader, steps, grad_accum):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = iter(loader)
    for step in range(steps):
        for _ in range(grad_accum):
            optimizer.zero_grad()  # expect: TL007
            x, y = next(batches)
            loss = F.cross_entropy(model(x), y) / grad_accum
            loss.backward()
        optimizer.step()
