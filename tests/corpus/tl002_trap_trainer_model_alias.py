"""The optimizer holds `model`'s parameters; the loop resets them as `self.model`."""
import torch


class Trainer:
    def __init__(self, model, generator_head, loader, lr=1e-3):
        self.model = model
        self.head = generator_head
        self.loader = loader
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.head_optimizer = torch.optim.Adam(generator_head.parameters(), lr=lr)
        self.criterion = torch.nn.MSELoss()

    def train_epoch(self):
        for x, y in self.loader:
            self.model.zero_grad(set_to_none=True)
            self.head.zero_grad(set_to_none=True)
            features = self.model(x)
            loss = self.criterion(self.head(features), y)
            loss.backward()
            self.optimizer.step()
            self.head_optimizer.step()
