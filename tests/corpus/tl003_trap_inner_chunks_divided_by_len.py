"""Chunks of one batch, each chunk's loss divided by how many chunks there are."""
import torch
import torch.nn as nn


def train(model, loader, optimizer, max_chunk=16):
    criterion = nn.CrossEntropyLoss()
    for images, labels in loader:
        chunks = list(zip(images.split(max_chunk), labels.split(max_chunk)))
        optimizer.zero_grad()
        for x, y in chunks:
            loss = criterion(model(x), y)
            loss = loss / len(chunks)
            loss.backward()
        optimizer.step()
