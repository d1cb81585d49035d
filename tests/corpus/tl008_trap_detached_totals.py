"""Running totals of detached values: `detach()`, `float()`, accuracy counts."""
import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, device):
    total_loss = 0.0
    total_kl = 0.0
    correct = 0
    seen = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits, kl = model(x)
        nll = F.cross_entropy(logits, y)
        loss = nll + 1e-3 * kl
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.detach().cpu() * x.size(0)
        total_kl = total_kl + float(kl)
        correct += (logits.argmax(dim=1) == y).sum().item()
        seen += x.size(0)
    return total_loss.item() / seen, total_kl / len(loader), correct / seen
