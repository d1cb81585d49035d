"""A micro-batch count kept by hand over a plain `for batch in loader:` and bumped after the test (0-based when
read): `(seen + 1) % accum == 0` misses the last partial window of each epoch."""
import torch
import torch.nn.functional as F


def fit(model, loader, epochs, accum=4):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        seen = 0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y) / accum
            loss.backward()
            if (seen + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
            seen += 1
