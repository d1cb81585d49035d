"""Per-layer probes and per-candidate heads: each iteration builds a new module and an optimizer over its parameters, which start with no gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, dim, hidden, classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def one_step_probes(features_by_layer, labels, num_classes, lr=0.1):
    """How far one SGD step on a fresh linear probe moves the loss, layer by layer."""
    gains = []
    for feats in features_by_layer:
        probe = nn.Linear(feats.size(1), num_classes)
        optimizer = torch.optim.SGD(probe.parameters(), lr=lr)
        before = F.cross_entropy(probe(feats), labels)
        before.backward()
        optimizer.step()
        with torch.no_grad():
            gains.append(before.item() - F.cross_entropy(probe(feats), labels).item())
    return gains


def score_heads(candidates, feats, labels, device="cpu"):
    scores = []
    for hidden in candidates:
        head = MLP(feats.size(1), hidden, 10).to(device)
        optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
        loss = F.cross_entropy(head(feats), labels)
        loss.backward()
        optimizer.step()
        scores.append(loss.item())
    return scores
