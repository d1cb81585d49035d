"""The micro-batches since the last update held in a name, the mark carried from epoch to epoch: the
left-over micro-batches of an epoch join the next epoch's first window, but the last epoch's are never
applied."""
import torch.nn.functional as F


def fit(model, optimizer, loader, epochs, accum_steps):
    global_step = 0
    last_update = 0
    for epoch in range(epochs):
        for batch_idx, (x, y) in enumerate(loader):
            global_step += 1
            loss = F.cross_entropy(model(x), y) / accum_steps
            loss.backward()
            since_update = global_step - last_update
            if since_update > accum_steps - 1:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
                last_update = global_step
