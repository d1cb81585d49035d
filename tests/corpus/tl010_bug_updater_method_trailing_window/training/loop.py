"""`optim_wrapper` (an `AmpOptimWrapper` train.py builds, training/optim_wrapper.py) backpropagates each
micro-batch's loss and steps when `step` holds, only after a full window: when the loader's length is not a
multiple of `accum_steps`, the last micro-batches' gradients are never applied and leak into the next epoch."""


def run_epoch(model, loader, optim_wrapper, accum_steps, criterion):
    for it, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        optim_wrapper.update(loss, model.parameters(), step=(it + 1) % accum_steps == 0)  # expect: TL010
