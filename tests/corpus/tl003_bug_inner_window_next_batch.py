"""A step of `grad_accum` micro-batches drawn from an iterator in an inner loop, one update after it."""
import torch
import torch.nn.functional as F


def train(model, loader, max_steps, grad_accum):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batches = iter(loader)
    for step in range(max_steps):
        for micro in range(grad_accum):
            xb, yb = next(batches)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()  # expect: TL003
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(step, loss.item())
