"""A detection loss module of this file returns the total and its two parts; the loop backpropagates the
total and adds up the parts for the epoch's report: every part keeps its batch's graph alive."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DetectionLoss(nn.Module):
    def __init__(self, loc_weight=1.0):
        super().__init__()
        self.loc_weight = loc_weight

    def forward(self, cls_preds, box_preds, cls_targets, box_targets):
        cls_loss = F.cross_entropy(cls_preds.flatten(0, 1), cls_targets.flatten())
        loc_loss = F.smooth_l1_loss(box_preds, box_targets, reduction="sum") / box_targets.size(0)
        return cls_loss + self.loc_weight * loc_loss, cls_loss, loc_loss


def train_epoch(net, loader, optimizer, device):
    criterion = DetectionLoss(loc_weight=5.0)
    epoch_cls, epoch_loc = 0.0, 0.0
    for images, cls_targets, box_targets in loader:
        cls_preds, box_preds = net(images.to(device))
        loss, cls_loss, loc_loss = criterion(cls_preds, box_preds, cls_targets.to(device), box_targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_cls += cls_loss  # expect: TL008
        epoch_loc += loc_loss  # expect: TL008
    print(f"cls {epoch_cls / len(loader):.4f}  loc {epoch_loc / len(loader):.4f}")
