"""Char-RNN: the hidden state is initialised once per epoch and carried through every batch."""
import torch
import torch.nn as nn


def train(model, batches, vocab_size, batch_size, epochs=20, lr=2e-3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        hidden = model.init_hidden(batch_size)
        for inputs, targets in batches:
            optimizer.zero_grad()
            output, hidden = model(inputs, hidden)  # expect: TL012
            loss = criterion(output.view(-1, vocab_size), targets.view(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
