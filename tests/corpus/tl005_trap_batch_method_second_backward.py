"""`process_batch` backpropagates two heads over one shared trunk output: the first backward keeps the graph
because the second goes through the trunk's part of it again."""
import torch


class Trainer:
    def __init__(self, trunk, head_a, head_b, optimizer):
        self.trunk = trunk
        self.head_a = head_a
        self.head_b = head_b
        self.optimizer = optimizer

    def process_batch(self, batch):
        x, y_a, y_b = self.to_torch(batch)
        features = self.trunk(x)
        self.optimizer.zero_grad()
        loss_a = torch.nn.functional.mse_loss(self.head_a(features), y_a)
        loss_a.backward(retain_graph=True)
        loss_b = torch.nn.functional.mse_loss(self.head_b(features), y_b)
        loss_b.backward()
        self.optimizer.step()

    def fit(self, batches):
        for batch in batches:
            self.process_batch(batch)
