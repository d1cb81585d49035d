"""The head is trained on features the backbone computed once, before the loop, and handed to `train_head`
on every iteration: each backward goes through the backbone's graph again, so the retained graph is
needed by the next call."""
import torch


class HeadTrainer:
    def __init__(self, backbone, head, lr):
        self.backbone = backbone
        self.head = head
        self.optimizer = torch.optim.SGD(head.parameters(), lr=lr)

    def train_head(self, features, target):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.head(features), target)
        loss.backward(retain_graph=True)
        self.optimizer.step()

    def fit(self, images, targets, steps):
        features = self.backbone(images)
        for step in range(steps):
            self.train_head(features, targets)
