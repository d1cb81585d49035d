"""The None-guarded detach also waits for every `k`-th batch, while backward runs on every batch."""
import torch.nn.functional as F


def train(rnn, head, loader, optimizer, k=8):
    state = None
    for i, (x, y) in enumerate(loader):
        if state is not None and i % k == 0:
            state = state.detach()
        out, state = rnn(x, state)  # expect: TL012
        loss = F.mse_loss(head(out), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
