"""The head is rebuilt only when the task changes; on other iterations the optimizer is rebuilt over the old head, whose gradients pile up."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def continual(stream, dim, classes):
    head = nn.Linear(dim, classes)
    current = None
    for task, feats, labels in stream:
        if task != current:
            head = nn.Linear(dim, classes)
            current = task
        optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
        loss = F.cross_entropy(head(feats), labels)
        loss.backward()
        optimizer.step()  # expect: TL002
