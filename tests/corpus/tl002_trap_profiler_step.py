"""Profiled training: `prof.step()` and `scheduler.step()` are not optimizers."""
import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


def profile_training(model, loader, criterion, log_dir):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3),
        on_trace_ready=tensorboard_trace_handler(log_dir),
    ) as prof:
        for step, (x, y) in enumerate(loader):
            if step >= 5:
                break
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            prof.step()
        scheduler.step()
