"""Fine-tune a classifier with gradient accumulation on a small GPU.

Carries TL003: the mean-reduced loss is not divided by the accumulation count,
so every update is `accumulation_steps` times the large-batch gradient.
"""

import argparse

import numpy as np
import torch
from torch import nn, optim


def evaluate(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, target in loader:
            correct += (model(images.to(device)).argmax(1) == target.to(device)).sum().item()
    return correct / len(loader.dataset)


def finetune(model, train_loader, val_loader, args):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    accumulation_steps = args.gradient_accumulation_steps
    for epoch in range(args.epochs):
        model.train()
        for i, (images, target) in enumerate(train_loader):
            images = images.to(args.device, non_blocking=True)
            target = torch.from_numpy(np.array(target)).long().to(args.device, non_blocking=True)
            outputs = model(images)
            loss = criterion(outputs, target)
            loss.backward()
            if (i + 1) % accumulation_steps == 0 or (i + 1) == len(train_loader):
                optimizer.step()
                optimizer.zero_grad()
        print(f"epoch {epoch}: accuracy {evaluate(model, val_loader, args.device):.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--gradient-accumulation-steps", type=int, default=8)
    parser.add_argument("--device", default="cuda")
    print(parser.parse_args())
