"""char-rnn written for old PyTorch: the hidden state is cut from its history with `.data` after every update."""
import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden_size=128, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden_size)
        self.rnn = nn.GRU(hidden_size, hidden_size, layers)
        self.decoder = nn.Linear(hidden_size, vocab)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.embed(x), hidden)
        return self.decoder(out), hidden


def train(model, chunks, optimizer, batch_size, layers=2, hidden_size=128):
    criterion = nn.CrossEntropyLoss()
    hidden = torch.zeros(layers, batch_size, hidden_size)
    for inputs, targets in chunks:
        output, hidden = model(inputs, hidden)
        hidden = hidden.data
        loss = criterion(output.view(-1, output.size(-1)), targets.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_cloned(model, chunks, optimizer, batch_size, layers=2, hidden_size=128):
    criterion = nn.CrossEntropyLoss()
    hidden = torch.zeros(layers, batch_size, hidden_size)
    for inputs, targets in chunks:
        output, hidden = model(inputs, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        hidden = hidden.data.clone()
