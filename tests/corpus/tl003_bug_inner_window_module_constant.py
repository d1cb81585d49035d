"""A script whose accumulation count is a module constant: eight micro-batches per step, none divided."""
import torch.nn.functional as F
GRAD_ACCUM = 8


def train(model, optimizer, batches, steps):
    for step in range(steps):
        for _ in range(GRAD_ACCUM):
            x, y = next(batches)
            F.mse_loss(model(x), y).backward()  # expect: TL003
        optimizer.step()
        optimizer.zero_grad()
