"""The first head's output is handed to a cache object, and the second loss reads it back from the cache:
the later backward goes through the retained graph again."""
import torch.nn.functional as F


class FeatureCache:
    def __init__(self):
        self.features = None

    def store(self, features):
        self.features = features


def train(encoder, head_a, head_b, loader, optimizer):
    cache = FeatureCache()
    for x, y_a, y_b in loader:
        features = encoder(x)
        cache.store(features)
        loss_a = F.cross_entropy(head_a(features), y_a)
        optimizer.zero_grad()
        loss_a.backward(retain_graph=True)
        loss_b = F.cross_entropy(head_b(cache.features), y_b)
        loss_b.backward()
        optimizer.step()
