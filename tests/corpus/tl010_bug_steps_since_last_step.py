"""YOLOv9's loop: the step waits until `accumulate` micro-batches have run since the last one (`ni -
last_opt_step >= accumulate`, `ni` the micro-batch index since the start of training), and each epoch begins
with `optimizer.zero_grad()`: the micro-batches after an epoch's last step are thrown away. The loss is
summed over the batch (`* bs`), so it is not divided by `accumulate`."""
import torch
import torch.nn as nn
from tqdm import tqdm


class ComputeLoss:
    def __init__(self, model):
        self.bce = nn.BCEWithLogitsLoss()
        self.model = model

    def __call__(self, pred, targets):
        bs = pred.shape[0]
        lbox = (pred[:, :4] - targets[:, :4]).abs().mean()
        lcls = self.bce(pred[:, 4:], targets[:, 4:])
        return (lbox + lcls) * bs, torch.cat((lbox, lcls)).detach()


def train(model, optimizer, train_loader, epochs, nbs=64, batch_size=16, rank=-1, device="cpu"):
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    accumulate = max(round(nbs / batch_size), 1)
    nb = len(train_loader)
    last_opt_step = -1
    compute_loss = ComputeLoss(model)
    for epoch in range(epochs):
        model.train()
        pbar = enumerate(train_loader)
        if rank in {-1, 0}:
            pbar = tqdm(pbar, total=nb)
        optimizer.zero_grad()
        for i, (imgs, targets) in pbar:
            ni = i + nb * epoch
            imgs = imgs.to(device).float() / 255
            loss, loss_items = compute_loss(model(imgs), targets.to(device))
            scaler.scale(loss).backward()
            if ni - last_opt_step >= accumulate:  # expect: TL010
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
                last_opt_step = ni
