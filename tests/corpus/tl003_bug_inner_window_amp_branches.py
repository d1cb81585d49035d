"""A pretraining step: micro-batches prefetched from the loader, AMP when a scaler is given, else plain."""
import torch


def train(model, optimizer, train_loader, num_iterations, grad_accum_steps, scaler=None):
    x, y = next(train_loader)
    for step in range(num_iterations):
        for micro_step in range(grad_accum_steps):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x, y)
            train_loss = loss.detach()
            if scaler is not None:
                scaler.scale(loss).backward()  # expect: TL003
            else:
                loss.backward()
            x, y = next(train_loader)
        if scaler is not None:
            scaler.unscale_(optimizer)
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        model.zero_grad(set_to_none=True)
        print(step, train_loss.item())
