"""The state's `.data` is copied into a snapshot for logging, but the state itself is fed back with its graph."""
import torch
import torch.nn as nn


def train(rnn, head, batches, optimizer, batch_size):
    criterion = nn.MSELoss()
    hidden = torch.zeros(1, batch_size, 32)
    snapshots = []
    for x, y in batches:
        out, hidden = rnn(x, hidden)  # expect: TL012
        snapshots.append(hidden.data.clone())
        loss = criterion(head(out), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return snapshots
