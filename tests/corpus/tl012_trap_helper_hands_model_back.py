"""A forward helper of this file hands back the model it was given, unchanged, with the predictions and
the loss: rebinding `model` to it each iteration feeds no graph back."""
import torch.nn.functional as F


def forward_step(model, batch, device):
    images, targets = batch
    logits = model(images.to(device))
    loss = F.cross_entropy(logits, targets.to(device))
    return model, logits, loss


def train(model, loader, optimizer, device, epochs):
    for epoch in range(epochs):
        for batch in loader:
            optimizer.zero_grad()
            model, logits, loss = forward_step(model, batch, device)
            loss.backward()
            optimizer.step()
