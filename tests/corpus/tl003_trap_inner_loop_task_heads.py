"""Multi-task learning: one loss per task head on a shared backbone, summed by backpropagating each, one step."""
import torch
import torch.nn.functional as F


def train(backbone, heads, task_loaders, optimizer, steps):
    iterators = [iter(loader) for loader in task_loaders]
    for step in range(steps):
        optimizer.zero_grad()
        for t in range(len(heads)):
            x, y = next(iterators[t])
            loss = F.cross_entropy(heads[t](backbone(x)), y)
            loss.backward()
        optimizer.step()
