"""Per-epoch StepLR outside the batch loop, and ReduceLROnPlateau on the validation loss."""
import torch
from torch import optim


@torch.no_grad()
def validate(model, loader, criterion):
    model.eval()
    return sum(criterion(model(x), y).item() for x, y in loader) / len(loader)


def fit(model, train_loader, val_loader, epochs=30):
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    step_lr = optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.1)
    plateau = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", patience=3)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        step_lr.step()
        val_loss = validate(model, val_loader, criterion)
        plateau.step(val_loss)
