"""A helper of the file says which slot of its window a micro-batch fills (`step % accum`); the loop steps on
the window's last slot (and on the epoch's last micro-batch). The mean loss is never divided by `accum`."""
import torch
import torch.nn as nn


def window_slot(step, accum):
    return step % accum


class Trainer:
    def __init__(self, model, accum=4):
        self.model = model
        self.accum = accum
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def train_epoch(self, loader):
        self.model.train()
        for step, (images, labels) in enumerate(loader):
            slot = window_slot(step, self.accum)
            loss = self.criterion(self.model(images), labels)
            loss.backward()  # expect: TL003
            if slot == self.accum - 1 or step + 1 == len(loader):
                self.optimizer.step()
                self.optimizer.zero_grad()
