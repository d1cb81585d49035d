"""Fabric's `backward` does not scale the loss: accumulating by hand, the script must divide it."""
import lightning as L
import torch
import torch.nn.functional as F


def train(model, loader, accumulate=4):
    fabric = L.Fabric(accelerator="cuda", devices=2, precision="bf16-mixed")
    fabric.launch()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    for i, (x, y) in enumerate(loader):
        boundary = (i + 1) % accumulate == 0 or i + 1 == len(loader)
        with fabric.no_backward_sync(model, enabled=not boundary):
            loss = F.cross_entropy(model(x), y)
            fabric.backward(loss / accumulate)
        if boundary:
            optimizer.step()
            optimizer.zero_grad()
