import torch
from torch import nn


class MetaModel(nn.Module):
    """A causal LM whose labels hold 0 where a prompt or padding is: the loss is a mean over the rest."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)
        self.vocab = vocab
        self.criterion = torch.nn.CrossEntropyLoss(ignore_index=0)

    def forward(self, examples, labels):
        output = self.head(self.embed(examples))[:, :-1, :]
        labels = labels[:, 1:]
        if labels.sum() == 0:
            c_loss = output.mean() * 0  # nothing to predict in the whole batch
        else:
            c_loss = self.criterion(output.reshape(-1, self.vocab), labels.flatten())
        return c_loss, {"balance": (output.pow(2).mean(), 0.01)}
