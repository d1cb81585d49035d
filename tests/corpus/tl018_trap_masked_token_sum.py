"""Language model with padding: token losses summed over the mask and divided by the token count."""
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer, vocab_size, pad_id):
        self.model = model
        self.optimizer = optimizer
        self.vocab_size = vocab_size
        self.pad_id = pad_id
        self.token_loss = nn.CrossEntropyLoss(reduction="none")

    def train_epoch(self, loader):
        for input_ids, labels in loader:
            logits = self.model(input_ids)
            losses = self.token_loss(logits.view(-1, self.vocab_size), labels.view(-1))
            mask = (labels.view(-1) != self.pad_id).float()
            loss = (losses * mask).sum() / mask.sum()
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
