"""Truncated BPTT over one long sequence: the window's loss is backpropagated, then the state detached."""
import torch
import torch.nn as nn


def train_sequence(cell, readout, xs, ys, optimizer, k=32):
    criterion = nn.MSELoss()
    h = torch.zeros(1, cell.hidden_size)
    window_loss = 0.0
    for t in range(len(xs)):
        h = cell(xs[t], h)
        window_loss = window_loss + criterion(readout(h), ys[t])
        if (t + 1) % k == 0 or t == len(xs) - 1:
            optimizer.zero_grad()
            window_loss.backward()
            optimizer.step()
            h.detach_()
            window_loss = 0.0
