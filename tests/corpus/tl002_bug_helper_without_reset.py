"""Step-based training with a helper that clips and logs, but does not reset."""
import torch
import torch.nn.functional as F


def clip_and_log(model, max_norm, writer, step):
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    writer.add_scalar("train/grad_norm", norm, step)


def train(cfg, model, data_iter, writer):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.train.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.train.max_steps)
    for p in model.parameters():
        p.grad = None
    step = 0
    while step < cfg.train.max_steps:
        batch = next(data_iter)
        loss = F.mse_loss(model(batch["x"]), batch["y"])
        loss.backward()
        clip_and_log(model, cfg.train.max_norm, writer, step)
        optimizer.step()  # expect: TL002
        scheduler.step()
        step += 1
