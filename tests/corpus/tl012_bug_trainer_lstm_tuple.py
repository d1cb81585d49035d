"""Trainer for a streaming LSTM language model; `(h, c)` is carried from batch to batch."""
import torch
import torch.nn as nn


class StreamTrainer:
    def __init__(self, vocab, emb=256, hid=512, layers=2):
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hid, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hid, vocab)
        params = list(self.embed.parameters()) + list(self.lstm.parameters()) + list(self.head.parameters())
        self.optimizer = torch.optim.Adam(params, lr=1e-3)
        self.criterion = nn.CrossEntropyLoss()

    def train_stream(self, stream, h, c):
        for tokens, targets in stream:
            out, (h, c) = self.lstm(self.embed(tokens), (h, c))  # expect: TL012
            logits = self.head(out)
            loss = self.criterion(logits.flatten(0, 1), targets.flatten())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
