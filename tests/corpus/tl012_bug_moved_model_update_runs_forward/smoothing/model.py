"""A refiner whose update runs the network on the embeddings it is given and hands back its output."""
import torch.nn as nn


class Refiner(nn.Module):
    def __init__(self, features: int, classes: int):
        super().__init__()
        self.encoder = nn.Linear(features, features)
        self.classifier = nn.Linear(features, classes)

    def forward(self, embeds):
        return self.classifier(embeds)

    def update_embeds(self, embeds, rate: float):
        return embeds + rate * self.encoder(embeds)
