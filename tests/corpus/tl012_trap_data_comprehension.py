"""LSTM taggers that cut each tensor of the `(h, c)` state with `.data` in a comprehension."""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab, tags, size=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, size)
        self.lstm = nn.LSTM(size, size, batch_first=True)
        self.out = nn.Linear(size, tags)

    def forward(self, tokens, state):
        features, state = self.lstm(self.embed(tokens), state)
        return self.out(features), state


def train(tagger, stream, optimizer):
    criterion = nn.CrossEntropyLoss()
    state = None
    for tokens, tags in stream:
        logits, state = tagger(tokens, state)
        state = tuple(s.data for s in state)
        loss = criterion(logits.flatten(0, 1), tags.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_list(tagger, stream, optimizer):
    criterion = nn.CrossEntropyLoss()
    hidden = None
    for tokens, tags in stream:
        logits, hidden = tagger(tokens, hidden)
        loss = criterion(logits.flatten(0, 1), tags.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        hidden = [s.data for s in hidden]
