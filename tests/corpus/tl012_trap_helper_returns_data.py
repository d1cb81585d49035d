"""Helpers of this file strip the state's history with `.data` / `Variable(h.data)`; the loop calls them after each update."""
import torch
import torch.nn as nn
from torch.autograd import Variable


def strip_history(h):
    """Wraps hidden states in new Variables, to cut them from their history."""
    if type(h) == Variable:
        return Variable(h.data)
    return tuple(strip_history(v) for v in h)


def plain(h):
    return h.data


def train(model, batches, optimizer, batch_size):
    criterion = nn.NLLLoss()
    hidden = model.init_hidden(batch_size)
    for data, targets in batches:
        output, hidden = model(data, hidden)
        hidden = strip_history(hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_gru(model, batches, optimizer, batch_size):
    criterion = nn.NLLLoss()
    hidden = torch.zeros(1, batch_size, 32)
    for data, targets in batches:
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        hidden = plain(hidden)
