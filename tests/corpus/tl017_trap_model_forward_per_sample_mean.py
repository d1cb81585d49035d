"""The model's `forward` averages the cross-entropy over the sentences of the batch (one label each, a fixed
number per micro-batch), and the labels-less path returns the logits: dividing by the accumulation count
gives the window's per-sample mean."""
import torch
import torch.nn as nn


class SentenceClassifier(nn.Module):
    def __init__(self, encoder, hidden, classes):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden, classes)
        self.loss_fct = nn.CrossEntropyLoss(ignore_index=-1)

    def forward(self, input_ids, labels=None):
        pooled = self.encoder(input_ids)[:, 0]
        logits = self.head(pooled)
        if labels is None:
            return logits
        return self.loss_fct(logits, labels)


def train(encoder, loader, accum):
    model = SentenceClassifier(encoder, 768, 3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    for step, (input_ids, labels) in enumerate(loader):
        loss = model(input_ids, labels)
        (loss / accum).backward()
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
