"""A deep ensemble: each member's loss backpropagated in a list comprehension; `l` also names the logged total."""
import torch
import torch.nn as nn


def train(members, loader, epochs=3):
    criterion = nn.CrossEntropyLoss()
    params = [p for m in members for p in m.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    l = 0.0
    for epoch in range(epochs):
        for x, y in loader:
            ls = [criterion(m(x), y) for m in members]
            optimizer.zero_grad()
            [l.backward() for l in ls]
            optimizer.step()
            l += sum(v.item() for v in ls)
        print(f"epoch {epoch}: {l:.3f}")
