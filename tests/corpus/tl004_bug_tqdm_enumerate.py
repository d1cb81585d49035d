"""Accumulation with a progress bar wrapped around `enumerate`."""
import torch.nn as nn
from tqdm import tqdm


def train_epoch(model, loader, optimizer, accum_steps=4):
    criterion = nn.CrossEntropyLoss()
    model.train()
    for i, (x, y) in tqdm(enumerate(loader), total=len(loader)):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if i % accum_steps == 0:  # expect: TL004, TL010
            optimizer.step()
            optimizer.zero_grad()
