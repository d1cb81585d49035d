"""Semantic segmentation with a void label: the loss averages over whole label maps of one size, with a
few boundary pixels ignored; it is not a mean over a varying number of tokens."""
import torch
import torch.nn as nn


def train(model, loader, accumulation_steps=2, epochs=50):
    criterion = nn.CrossEntropyLoss(ignore_index=255)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        for i, (image, target) in enumerate(loader):
            output = model(image)["out"]
            loss = criterion(output, target) / accumulation_steps
            loss.backward()
            if (i + 1) % accumulation_steps == 0 or i + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
