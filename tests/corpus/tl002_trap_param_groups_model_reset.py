"""Parameter groups with their own learning rates; gradients reset through the model."""
import torch


def finetune(model, loader, criterion, epochs=3):
    optimizer = torch.optim.AdamW(
        [
            {"params": model.backbone.parameters(), "lr": 1e-5},
            {"params": model.classifier.parameters(), "lr": 1e-3},
        ]
    )
    for epoch in range(epochs):
        for images, labels in loader:
            model.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
