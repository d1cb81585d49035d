import torch.nn as nn
from torch.nn import CrossEntropyLoss


class Tagger(nn.Module):
    def __init__(self, encoder, hidden, num_labels):
        super().__init__()
        self.encoder = encoder
        self.num_labels = num_labels
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        logits = self.classifier(self.encoder(input_ids))
        if labels is None:
            return (logits,)
        active = attention_mask.view(-1) == 1
        loss = CrossEntropyLoss()(logits.view(-1, self.num_labels)[active], labels.view(-1)[active])
        return loss, logits
