"""Recurrent state detached in place before it is fed back: whole, per element, or by index."""
import torch
from torch import nn


def train_rpc_rnn(model, batches, optimizer, criterion, hidden):
    for data, target in batches:
        hidden[0].detach_()
        hidden[1].detach_()
        output, hidden = model(data, hidden)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_stateful(cell, head, batches, optimizer, state):
    for x, y in batches:
        for tensor in state:
            tensor.detach_()
        out, state = cell(x, state)
        nn.functional.mse_loss(head(out), y).backward()
        optimizer.step()
        optimizer.zero_grad()


def train_gru(gru, head, chunks, optimizer, h):
    for x, y in chunks:
        out, h = gru(x, h)
        loss = torch.nn.functional.mse_loss(head(out), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        h.detach_()


def train_comprehension(cell, head, batches, optimizer, state):
    for x, y in batches:
        [part.detach_() for part in state]
        out, state = cell(x, state)
        nn.functional.mse_loss(head(out), y).backward()
        optimizer.step()
        optimizer.zero_grad()
