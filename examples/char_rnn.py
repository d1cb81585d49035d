"""A character-level language model trained with truncated backpropagation through time.

Carries TL012: the GRU's hidden state is fed back into the next chunk without `detach()`,
so the second `backward()` reaches into the first chunk's freed graph.
"""

import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab: int = 96, hidden: int = 256) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden):
        out, hidden = self.gru(self.embed(tokens), hidden)
        return self.head(out), hidden


def train(model: CharRNN, text: torch.Tensor, chunk: int = 64, batch: int = 32):
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    criterion = nn.CrossEntropyLoss()
    streams = text[: len(text) // batch * batch].view(batch, -1)
    hidden = torch.zeros(1, batch, 256)
    for start in range(0, streams.size(1) - chunk - 1, chunk):
        inputs = streams[:, start:start + chunk]
        targets = streams[:, start + 1:start + chunk + 1]
        logits, hidden = model(inputs, hidden)
        loss = criterion(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
