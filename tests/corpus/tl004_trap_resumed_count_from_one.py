"""A trainer whose micro-batch count starts at 1 on a fresh run and is restored from the checkpoint on resume."""
import torch


def fit(model, criterion, loader, epochs, accumulation, checkpoint_path=None):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    seen = 1
    if checkpoint_path is not None:
        checkpoint = torch.load(checkpoint_path)
        model.load_state_dict(checkpoint["model"])
        seen = checkpoint.get("seen", 1)
    for epoch in range(epochs):
        for inputs, targets in loader:
            loss = criterion(model(inputs), targets) / accumulation
            loss.backward()
            if seen % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
            seen += 1
        optimizer.step()
        optimizer.zero_grad()
