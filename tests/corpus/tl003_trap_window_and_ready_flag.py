"""The step needs the window's last micro-batch and a loss below the spike threshold: gradients keep
adding up through a spike, so a window lasts until both hold, not `accumulation_steps` micro-batches."""
import torch
from torch import nn


def fit(model, loader, optimizer, accumulation_steps, spike_threshold=10.0):
    criterion = nn.CrossEntropyLoss()
    for step, (inputs, labels) in enumerate(loader):
        loss = criterion(model(inputs), labels)
        loss.backward()
        stable = loss.item() < spike_threshold
        if (step + 1) % accumulation_steps == 0 and stable:
            optimizer.step()
            optimizer.zero_grad()
