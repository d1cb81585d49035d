"""`tuple(s.contiguous() for s in state)` copies the LSTM's state element by element; it keeps the graph."""
import torch.nn as nn


def train(lstm, head, stream, optimizer):
    criterion = nn.CrossEntropyLoss()
    state = None
    for tokens, tags in stream:
        features, state = lstm(tokens, state)  # expect: TL012
        state = tuple(s.contiguous() for s in state)
        loss = criterion(head(features).flatten(0, 1), tags.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
