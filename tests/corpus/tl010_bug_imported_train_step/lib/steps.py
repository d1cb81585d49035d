"""The micro-batch step of the training scripts."""
import torch.nn.functional as F


def train_step(model, batch, optimizer, accum_steps, sync=True):
    inputs, labels = batch
    loss = F.cross_entropy(model(inputs), labels) / accum_steps
    loss.backward()
    if sync:
        optimizer.step()
        optimizer.zero_grad()
    return loss.detach()
