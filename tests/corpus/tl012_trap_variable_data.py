"""Pre-0.4 language model: `Variable(hidden.data)` wraps the state in a new leaf after each step."""
import torch
import torch.nn as nn
from torch.autograd import Variable


def train_epoch(model, batches, optimizer, batch_size, clip=0.25):
    criterion = nn.NLLLoss()
    model.train()
    hidden = model.init_hidden(batch_size)
    for data, targets in batches:
        data, targets = Variable(data), Variable(targets)
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm(model.parameters(), clip)
        optimizer.step()
        hidden = Variable(hidden.data)


def train_qualified(model, batches, optimizer, batch_size):
    criterion = nn.NLLLoss()
    hidden = model.init_hidden(batch_size)
    for data, targets in batches:
        output, hidden = model(data, hidden)
        hidden = torch.autograd.Variable(hidden.data, requires_grad=False)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
