"""`and batch_idx > 0` skips the step at 0 but the windows are still off by one."""
import torch


def train_epoch(args, model, loader, optimizer, criterion):
    scaler = torch.cuda.amp.GradScaler()
    for batch_idx, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / args.gradient_accumulation_steps
        scaler.scale(loss).backward()
        if batch_idx % args.gradient_accumulation_steps == 0 and batch_idx > 0:  # expect: TL004, TL010
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
