"""The epoch loss goes to an experiment tracker after the loop: the total keeps every batch's graph. (The
tracker takes a number as well as a tensor, but nothing in the file shows it: the fix is offered as unsafe.)"""
import torch.nn as nn
import wandb


def fit(model, loader, optimizer, epochs):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        epoch_loss = 0.0
        for images, labels in loader:
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            epoch_loss += loss  # expect: TL008
        wandb.log({"epoch": epoch, "train/loss": epoch_loss / len(loader)})
