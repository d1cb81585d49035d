"""Zero-shot architecture scoring: every candidate model is built by a factory of this file inside the loop, with its own optimizer, for one update."""
import torch
import torch.nn as nn


def build_model(cfg):
    layers = []
    width = cfg["in_dim"]
    for hidden in cfg["widths"]:
        layers += [nn.Linear(width, hidden), nn.GELU()]
        width = hidden
    return nn.Sequential(*layers, nn.Linear(width, cfg["classes"]))


def score_candidates(configs, batch, criterion):
    inputs, targets = batch
    scores = {}
    for name, cfg in configs.items():
        model = build_model(cfg)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        loss = criterion(model(inputs), targets)
        loss.backward()
        grad_norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5
        optimizer.step()
        scores[name] = (loss.item(), grad_norm.item())
    return scores
