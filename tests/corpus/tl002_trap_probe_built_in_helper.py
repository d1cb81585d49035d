"""The module and its optimizer are built two calls deep, in helpers of this file, on every call from the loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_head(dim, classes):
    head = nn.Linear(dim, classes)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    loss_scale = 1.0
    return head, optimizer, loss_scale


def probe_once(feats, labels, classes):
    head, optimizer, loss_scale = make_head(feats.size(1), classes)
    loss = F.cross_entropy(head(feats), labels) * loss_scale
    loss.backward()
    optimizer.step()
    return loss.item()


def fit_fresh_head(feats, labels, classes):
    head = nn.Linear(feats.size(1), classes)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    loss = F.cross_entropy(head(feats), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def probe_loss(feats, labels, classes):
    return fit_fresh_head(feats, labels, classes)


def probe_all(layers, labels, classes):
    first, results = [], []
    for feats in layers:
        first.append(probe_once(feats, labels, classes))
    for feats in layers:
        results.append(probe_loss(feats, labels, classes))
    return first, results
