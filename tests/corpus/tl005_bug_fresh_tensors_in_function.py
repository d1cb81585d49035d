"""Inside a function with parameters, the loss is built only from tensors made in the iteration; the only backward still retains the graph."""
import torch
import torch.nn as nn


def train_epoch(model, loader, optimizer, device, log_every=50):
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    model.train()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device, non_blocking=True), labels.to(device)
        noise = torch.randn(images.shape, device=device) * 0.01
        logits = model(images + noise)
        loss = criterion(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward(retain_graph=True)  # expect: TL005
        optimizer.step()
        if step % log_every == 0:
            print(step, loss.item())


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.weight = 1e-4
        self.criterion = nn.MSELoss()

    def fit(self, loader, epochs=1):
        for _ in range(epochs):
            for x, y in loader:
                self.optimizer.zero_grad()
                pred = self.model(x)
                loss = self.criterion(pred, y) + self.weight * pred.abs().mean()
                loss.backward(retain_graph=True)  # expect: TL005
                self.optimizer.step()
