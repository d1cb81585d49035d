"""A loop copied from an older Hugging Face `Trainer.train`: the epoch's length is held in `steps_in_epoch`, and the
last batch steps only when the whole epoch is no longer than one window. A longer epoch's last partial window is
never stepped: its gradients leak into the next epoch's first update."""
import torch
from torch import nn


def train(model, loader, accum, epochs, max_steps, sized=True):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        steps_in_epoch = len(loader) if sized else max_steps
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (step + 1) % accum == 0 or (steps_in_epoch <= accum and (step + 1) == steps_in_epoch):  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
