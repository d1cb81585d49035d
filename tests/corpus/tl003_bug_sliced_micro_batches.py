"""Large batches split into micro-batches inside the step: one backward per slice, one step per batch."""
import torch
from torch import nn


def train(model, loader, micro_batch_size=8, epochs=2):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for inputs, labels in loader:
            optimizer.zero_grad()
            for start in range(0, len(inputs), micro_batch_size):
                end = start + micro_batch_size
                loss = criterion(model(inputs[start:end]), labels[start:end])
                loss.backward()  # expect: TL003
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
