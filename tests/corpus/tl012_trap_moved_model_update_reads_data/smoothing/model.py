"""A linear classifier whose node embeddings are smoothed between training steps: the update reads the
classifier only through `.data`, so the embeddings it hands back carry no graph."""
import torch
import torch.nn as nn


class Smoother(nn.Module):
    def __init__(self, features: int, classes: int):
        super().__init__()
        self.classifier = nn.Linear(features, classes, bias=False)

    def forward(self, embeds):
        return self.classifier(embeds)

    def update_embeds(self, embeds, adjacency, labels, rate: float):
        predicted = self(embeds).data
        weight = self.classifier.weight.data
        embeds = torch.sparse.mm(adjacency, embeds)
        return embeds - rate * ((predicted - labels) @ weight)
