import torch


def forward_batch(model, batch, criterion):
    inputs, targets = batch
    outputs = model.forward(inputs)
    return criterion(outputs, targets)
