"""A helper of this file cuts the state: every `return` gives detached tensors (it recurses into tuples)."""
import torch


def cut(state):
    if isinstance(state, torch.Tensor):
        return state.detach()
    return tuple(cut(part) for part in state)


def train(model, batches, optimizer, criterion, hidden):
    for inputs, targets in batches:
        hidden = cut(hidden)
        output, hidden = model(inputs, hidden)
        loss = criterion(output, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
