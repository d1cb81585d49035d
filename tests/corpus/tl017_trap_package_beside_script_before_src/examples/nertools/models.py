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
        loss = CrossEntropyLoss(reduction="sum")(logits.view(-1, self.num_labels), labels.view(-1))
        return loss, logits
