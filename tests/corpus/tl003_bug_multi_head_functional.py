"""Detector with a classification and a box-regression head, accumulated over 8 batches."""
import torch
from torch.nn import functional as F

ACCUM_STEPS = 8


def train_epoch(model, loader, optimizer):
    model.train()
    for i, (images, (cls_targets, box_targets)) in enumerate(loader):
        cls_logits, box_pred = model(images)
        loss = F.cross_entropy(cls_logits, cls_targets) + 2.0 * F.smooth_l1_loss(box_pred, box_targets)
        loss.backward()  # expect: TL003
        if (i + 1) % ACCUM_STEPS == 0 or (i + 1) == len(loader):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            optimizer.step()
            optimizer.zero_grad()
