"""The "backward through the graph a second time" error was silenced with retain_graph=True."""
import torch
import torch.nn as nn


def train(cell, readout, sequence, targets, lr=1e-2):
    params = list(cell.parameters()) + list(readout.parameters())
    optimizer = torch.optim.RMSprop(params, lr=lr)
    h = torch.zeros(1, cell.hidden_size)
    t = 0
    while t < len(sequence):
        h = cell(sequence[t], h)  # expect: TL012
        loss = nn.functional.mse_loss(readout(h), targets[t])
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        t += 1
