"""`train_one_epoch` accumulates micro-batches of a model `main.py` wraps in `DataParallel` only."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, accum_iter=1):
    for step, (samples, targets) in enumerate(data_loader):
        loss = criterion(model(samples), targets) / accum_iter
        loss.backward()
        if (step + 1) % accum_iter == 0 or step + 1 == len(data_loader):
            optimizer.step()
            optimizer.zero_grad()
