"""Deep supervision: the network returns one logit map per stage, each with its own loss."""
import torch.nn as nn
from torch import optim

from models import DeeplySupervisedNet


def train_epoch(model, train_loader, optimizer, criterion, device):
    model.train()
    for images, target_var in train_loader:
        images, target_var = images.to(device), target_var.to(device)
        output = model(images)
        optimizer.zero_grad()
        loss = 0
        for j in range(len(output)):
            loss += criterion(output[j], target_var)
            loss.backward()  # expect: TL001
        optimizer.step()


def main(train_loader, device, epochs=30):
    model = DeeplySupervisedNet(num_stages=4).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(epochs):
        train_epoch(model, train_loader, optimizer, criterion, device)
