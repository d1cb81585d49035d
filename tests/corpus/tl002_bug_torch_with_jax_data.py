"""A PyTorch regression model fed by a JAX data pipeline: JAX is imported for the data, the loop is PyTorch's."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.nn as nn


def make_batches(key, n_batches, batch_size=32):
    for _ in range(n_batches):
        key, sub = jax.random.split(key)
        x = jax.random.normal(sub, (batch_size, 8))
        y = jnp.sum(x, axis=1, keepdims=True)
        yield np.asarray(x), np.asarray(y)


def train(epochs=5):
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    key = jax.random.PRNGKey(0)
    for epoch in range(epochs):
        key, sub = jax.random.split(key)
        for x, y in make_batches(sub, 100):
            x, y = torch.from_numpy(x), torch.from_numpy(y)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()  # expect: TL002
