"""Memory-saving chunked backward: each chunk's loss is backpropagated on its own."""
import torch.nn as nn


def train_epoch(model, train_loader, optimizer, chunks=4):
    criterion = nn.CrossEntropyLoss()
    for images, target in train_loader:
        optimizer.zero_grad()
        running = 0.0
        for chunk_x, chunk_y in zip(images.chunk(chunks), target.chunk(chunks)):
            part = criterion(model(chunk_x), chunk_y) / chunks
            part.backward()
            running += part.item()
        optimizer.step()
        print(f"loss {running:.4f}")
