"""Ultralytics' `TQDM` progress bar around `enumerate(loader)` passes the 0-based counter through: `i % accum == 0`
steps after the first micro-batch."""
import torch
from ultralytics.utils import TQDM


def train(model, loader, accum):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = torch.nn.CrossEntropyLoss()
    pbar = TQDM(enumerate(loader), total=len(loader))
    for i, (x, y) in pbar:
        loss = criterion(model(x), y) / accum
        loss.backward()
        if i % accum == 0:  # expect: TL004, TL010
            optimizer.step()
            optimizer.zero_grad()
