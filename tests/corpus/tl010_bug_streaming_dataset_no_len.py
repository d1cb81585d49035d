"""Pre-training on a streamed corpus: the DataLoader wraps an IterableDataset, which has no length."""
import torch
from torch.utils.data import DataLoader, IterableDataset


class TokenStream(IterableDataset):
    def __init__(self, paths, seq_len):
        self.paths = paths
        self.seq_len = seq_len

    def __iter__(self):
        for path in self.paths:
            tokens = torch.load(path)
            for start in range(0, len(tokens) - self.seq_len, self.seq_len):
                yield tokens[start:start + self.seq_len]


def train(model, paths, epochs=1, accum=16, lr=3e-4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    loader = DataLoader(TokenStream(paths, 1024), batch_size=4)
    for epoch in range(epochs):
        for i, tokens in enumerate(loader):
            loss = model(tokens, labels=tokens).loss / accum
            loss.backward()
            if (i + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
