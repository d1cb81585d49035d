"""YOLO-style trainer: the loss object of utils/loss.py returns its mean times the batch size, a sum over the
images, accumulated over `accumulate` batches up to the nominal batch on purpose."""
import torch

from utils.loss import ComputeLoss


def train(model, optimizer, scaler, dataloader, nbs, batch_size, device):
    accumulate = max(round(nbs / batch_size), 1)
    compute_loss = ComputeLoss(model)
    optimizer.zero_grad()
    for i, (imgs, targets) in enumerate(dataloader):
        imgs = imgs.to(device).float() / 255
        with torch.cuda.amp.autocast():
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets.to(device))
        scaler.scale(loss).backward()
        if (i + 1) % accumulate == 0 or i + 1 == len(dataloader):
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
