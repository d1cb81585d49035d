"""The loop's function never names torch, the file imports it: the tensors are PyTorch's, and the steps by hand
read gradients that nothing resets."""
import torch


def fit(w, b, loader, lr=0.1):
    for x, y in loader:
        loss = ((w * x + b - y) ** 2).mean()
        loss.backward()
        w.copy_(w - lr * w.grad)  # expect: TL002
        b.data.add_(b.grad, alpha=-lr)  # expect: TL002
