"""`retain_graph` computed per head: only the last head frees the graph."""
import torch


def train(backbone, heads, loader, criterion, params):
    optimizer = torch.optim.Adam(params, lr=1e-3)
    for x, ys in loader:
        optimizer.zero_grad()
        features = backbone(x)
        for k, head in enumerate(heads):
            loss = criterion(head(features), ys[k])
            loss.backward(retain_graph=k < len(heads) - 1)
        optimizer.step()
