"""A per-epoch, 1-based micro-batch count with the partial window stepped after the loop."""
import torch
import torch.nn.functional as F


def train(model, loader, epochs, accumulation_steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        nb_tr_steps = 0
        for batch in loader:
            x, y = batch
            loss = F.cross_entropy(model(x), y) / accumulation_steps
            nb_tr_steps += 1
            loss.backward()
            if nb_tr_steps % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        if nb_tr_steps % accumulation_steps != 0:
            optimizer.step()
            optimizer.zero_grad()
