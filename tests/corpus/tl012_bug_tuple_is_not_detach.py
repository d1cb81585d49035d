"""`state = tuple(state)` converts the LSTM's state; it does not cut its graph."""
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, 5)


def train(tagger, stream, optimizer):
    criterion = nn.CrossEntropyLoss()
    state = None
    for tokens, tags in stream:
        features, state = tagger.lstm(tokens, state)  # expect: TL012
        state = tuple(state)
        loss = criterion(tagger.out(features).flatten(0, 1), tags.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
