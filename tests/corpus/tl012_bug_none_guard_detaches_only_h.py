"""The None-guarded detach cuts the hidden state `h` but feeds the cell state `c` back attached."""
import torch.nn.functional as F


def train(loader, optimizer, cell, head):
    h = c = None
    for x, y in loader:
        if h is not None:
            h = h.detach()
        h, c = cell(x, h, c)  # expect: TL012
        loss = F.mse_loss(head(h), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
