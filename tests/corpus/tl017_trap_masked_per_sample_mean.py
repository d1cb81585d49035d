"""A masked loss averaged per utterance first (each sample's frames summed and divided by its own length),
then over the batch: a mean over a fixed number of samples per micro-batch, so dividing by the accumulation
count gives the window's per-sample mean. A summed masked loss (`reduction="sum"`) is no mean at all."""
import torch
import torch.nn.functional as F


def train(model, loader, accum_steps):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, (x, y, lengths) in enumerate(loader):
        pred = model(x)
        mask = (torch.arange(y.size(1), device=y.device)[None, :] < lengths[:, None]).unsqueeze(-1)
        per_frame = (pred - y).abs() * mask
        per_sample = per_frame.sum(dim=(1, 2)) / mask.sum(dim=(1, 2))
        loss = per_sample.mean() + F.l1_loss(pred[mask.expand_as(pred)], y[mask.expand_as(y)], reduction="sum") * 1e-6
        (loss / accum_steps).backward()
        if (step + 1) % accum_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
