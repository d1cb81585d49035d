"""Contrastive encoder: one InfoNCE term per bank of negatives."""
import torch
from torch import autograd
import torch.nn.functional as F


def info_nce(anchor, positive, negatives, temperature):
    pos = F.cosine_similarity(anchor, positive).unsqueeze(1)
    neg = anchor @ negatives.T
    logits = torch.cat([pos, neg], dim=1) / temperature
    return F.cross_entropy(logits, torch.zeros(len(anchor), dtype=torch.long))


def train_step(encoder, optimizer, anchors, positives, negative_banks, temperature=0.07):
    optimizer.zero_grad()
    total = 0
    for negatives in negative_banks:
        total += info_nce(encoder(anchors), encoder(positives), encoder(negatives), temperature)
        autograd.backward(total)  # expect: TL001
    optimizer.step()
    return float(total)
