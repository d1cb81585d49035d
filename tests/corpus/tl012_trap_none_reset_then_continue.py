"""Streaming LSTM: a ragged batch drops the state and is skipped; otherwise the state is detached once it exists."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(stream, batch_size=16):
    lstm = nn.LSTM(40, 128, batch_first=True)
    classifier = nn.Linear(128, 10)
    optimizer = torch.optim.SGD(list(lstm.parameters()) + list(classifier.parameters()), lr=0.1)
    hidden = None
    for features, labels in stream:
        if features.size(0) != batch_size:
            hidden = None
            continue
        if not (hidden is None):
            hidden = (hidden[0].detach(), hidden[1].detach())
        output, hidden = lstm(features, hidden)
        loss = F.cross_entropy(classifier(output[:, -1]), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
