"""Slicing tensors by hand: `range(n_batches)` with an accumulation count that need not divide it."""
import torch
import torch.nn.functional as F


def train(model, X, Y, batch_size=32, accum=4, epochs=10):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    n_batches = (len(X) + batch_size - 1) // batch_size
    for epoch in range(epochs):
        perm = torch.randperm(len(X))
        for b in range(n_batches):
            idx = perm[b * batch_size:(b + 1) * batch_size]
            loss = F.mse_loss(model(X[idx]), Y[idx]) / accum
            loss.backward()
            if (b + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
