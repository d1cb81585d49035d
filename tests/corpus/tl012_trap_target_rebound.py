"""The loop's own target rebound in the body: a fresh batch every iteration, nothing carried."""
import torch


def move_to_device(batch, device):
    return {key: value.to(device) for key, value in batch.items()}


def train(model, dataloader, optimizer, device, mixup):
    model.train()
    for step, batch in enumerate(dataloader):
        optimizer.zero_grad()
        batch = move_to_device(batch, device)
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()


def train_mixup(model, loader, optimizer, criterion, mixup):
    for images, targets in loader:
        images, targets = mixup(images, targets)
        loss = criterion(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
