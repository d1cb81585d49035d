"""An iteration-based detector trainer (detectron-style) whose start iteration is restored when resuming."""
import torch


def do_train(cfg, model, data_loader, resume=False):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.base_lr, momentum=0.9)
    start_iter = 0
    if resume:
        checkpoint = torch.load(cfg.checkpoint, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_iter = checkpoint["iteration"] + 1
    data_iter = iter(data_loader)
    model.train()
    for iteration in range(start_iter, cfg.max_iter):
        images, targets = next(data_iter)
        loss_dict = model(images, targets)
        losses = sum(loss_dict.values()) / cfg.accum_iter
        losses.backward()
        if iteration % cfg.accum_iter == 0:  # expect: TL004, TL010
            optimizer.step()
            optimizer.zero_grad()
        if iteration % cfg.checkpoint_period == 0:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iteration": iteration},
                       cfg.checkpoint)
