"""Each batch is cut into `n_micro` equal micro-batches by the inner loop's counter."""
import torch
from torch import nn


def fit(model, loader, n_micro, epochs=1):
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        for images, labels in loader:
            size = images.shape[0] // n_micro
            optimizer.zero_grad()
            for m in range(n_micro):
                logits = model(images[m * size:(m + 1) * size])
                loss = criterion(logits, labels[m * size:(m + 1) * size])
                loss.backward()  # expect: TL003
            optimizer.step()
