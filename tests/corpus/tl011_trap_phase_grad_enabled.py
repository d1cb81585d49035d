"""One loop for both phases: gradients follow `phase == "train"`, and only training backpropagates."""
import torch


def run_epoch(model, loaders, criterion, optimizer, phase):
    model.train(phase == "train")
    total = 0.0
    for inputs, targets in loaders[phase]:
        with torch.set_grad_enabled(phase == "train"):
            outputs = model(inputs)
            loss = criterion(outputs, targets)
        if phase == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(loaders[phase])
