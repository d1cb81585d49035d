"""A tabular trainer keeps its epoch loss in a tensor made with `torch.zeros(...)`, weighted by the batch size
in place: adding the graph-attached loss makes the total carry every batch's graph through the epoch."""
import torch
import torch.nn.functional as F


def train(model, loader, optimizer, device):
    model.train()
    loss_accum = torch.zeros(1, device=device, dtype=torch.float32).squeeze_()
    total_count = 0
    for features, target in loader:
        features, target = features.to(device), target.to(device)
        loss = F.cross_entropy(model(features), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total_count += len(target)
        loss *= len(target)
        loss_accum += loss  # expect: TL008
    return loss_accum / total_count


def train_distributed(model, loader, optimizer):
    loss_accum = torch.tensor(0.0)
    for features, target in loader:
        loss = F.cross_entropy(model(features), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss_accum = loss_accum + loss * len(target)  # expect: TL008
    torch.distributed.all_reduce(loss_accum)
    return loss_accum
