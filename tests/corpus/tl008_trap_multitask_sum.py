"""The summed multi-task loss is the one backpropagated; the epoch total uses item()."""
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, task_weights):
    epoch_total = 0.0
    for batch in loader:
        outputs = model(batch["image"])
        loss = 0.0
        for task, weight in task_weights.items():
            loss += weight * F.cross_entropy(outputs[task], batch[task])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_total += loss.item()
    return epoch_total / len(loader)
