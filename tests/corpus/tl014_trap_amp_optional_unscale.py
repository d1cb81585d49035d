"""The scaler is used only with AMP; `unscale_` under the same flag comes before the clip."""
import torch
from torch import nn


def fit(model, loader, epochs, use_amp, max_norm):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for images, labels in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", enabled=use_amp):
                loss = criterion(model(images), labels)
            scaler.scale(loss).backward()
            if use_amp:
                scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
