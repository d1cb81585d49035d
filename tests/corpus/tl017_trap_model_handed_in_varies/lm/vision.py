import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    """Image classes: a mean over a fixed number of samples, no token count."""

    def __init__(self, dim, classes):
        super().__init__()
        self.head = nn.Linear(dim, classes)

    def forward(self, images, labels):
        return F.cross_entropy(self.head(images), labels), {}
