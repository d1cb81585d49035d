"""The file builds a token tagger under the name `model` for evaluation, but the training loop's `model` is
the sentence classifier `main` passes in (one label per sentence, a fixed number per micro-batch): the
tagger's token mean is not what the loop divides."""
import torch
import torch.nn as nn
from transformers import BertForTokenClassification


class Tagger(BertForTokenClassification):
    def forward(self, input_ids, labels=None):
        logits = self.classifier(self.bert(input_ids)[0])
        if labels is None:
            return logits
        return nn.CrossEntropyLoss(ignore_index=0)(logits.view(-1, self.num_labels), labels.view(-1))


def train(model, loader, accum):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for step, (input_ids, labels) in enumerate(loader):
        loss = model(input_ids, labels)
        loss = loss / accum
        loss.backward()
        if (step + 1) % accum == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()


def evaluate(path, loader):
    model = Tagger.from_pretrained(path)
    return [model(input_ids) for input_ids, _ in loader]


def main(classifier, loader):
    train(classifier, loader, accum=4)
