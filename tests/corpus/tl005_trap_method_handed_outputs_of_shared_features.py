"""The loop hands `fit_head` one head's output per iteration, all computed before the loop from one
backbone pass: each call's backward goes through the backbone's graph again, so the retained graph is
needed by the next call, though the loop's target is otherwise fresh data."""
import torch


class Trainer:
    def __init__(self, proj, optimizer):
        self.proj = proj
        self.optimizer = optimizer

    def fit_head(self, out, target):
        loss = torch.nn.functional.cross_entropy(self.proj(out), target)
        loss.backward(retain_graph=True)

    def train(self, backbone, heads, images, targets):
        features = backbone(images)
        outputs = [head(features) for head in heads]
        for out, target in zip(outputs, targets):
            self.optimizer.zero_grad()
            self.fit_head(out, target)
            self.optimizer.step()
