"""Two branches: with accumulation the clip's unscale runs on every micro-batch; without it, all is per step."""
import torch


def train_one_epoch(cfg, model, criterion, loader, optimizer, scaler, lr_scheduler, epoch):
    optimizer.zero_grad()
    steps_per_epoch = len(loader)
    for idx, (images, targets) in enumerate(loader):
        images, targets = images.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(images)
        if cfg.accum_steps > 1:
            loss = criterion(outputs, targets) / cfg.accum_steps
            scaler.scale(loss).backward()
            if cfg.clip_grad:
                scaler.unscale_(optimizer)  # expect: TL014
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad)  # expect: TL014
            if (idx + 1) % cfg.accum_steps == 0 or idx + 1 == steps_per_epoch:
                scaler.step(optimizer)
                optimizer.zero_grad()
                scaler.update()
                lr_scheduler.step_update(epoch * steps_per_epoch + idx)
        else:
            loss = criterion(outputs, targets)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            if cfg.clip_grad:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad)
            scaler.step(optimizer)
            scaler.update()
            lr_scheduler.step_update(epoch * steps_per_epoch + idx)
