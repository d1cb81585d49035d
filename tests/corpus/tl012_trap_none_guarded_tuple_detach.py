"""An LSTM's (h, c) state, None before the first batch, detached layer by layer once it exists."""
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, hidden=None):
        output, hidden = self.lstm(self.embed(tokens), hidden)
        return self.out(output), hidden


def train_epoch(model, batches, optimizer, vocab):
    criterion = nn.CrossEntropyLoss()
    hidden = None
    for inputs, targets in batches:
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden)
        logits, hidden = model(inputs, hidden)
        loss = criterion(logits.reshape(-1, vocab), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
