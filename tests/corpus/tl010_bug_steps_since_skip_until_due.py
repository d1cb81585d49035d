"""`continue` until the window is due, written as the mark plus the count: the micro-batches after the last
step of the run are never applied."""
import torch


def train(model, optimizer, batches, accum):
    last_step = -1
    for it, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y) / accum
        loss.backward()
        if last_step + accum > it:  # expect: TL010
            continue
        optimizer.step()
        optimizer.zero_grad()
        last_step = it
