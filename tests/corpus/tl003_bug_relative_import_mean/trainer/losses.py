"""Losses of the trainer package."""
import torch.nn.functional as F


def lm_loss(logits, labels):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
