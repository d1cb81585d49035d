"""The loop hands each micro-batch's mean loss to `stepper.step()` (utils/stepper.py), which runs the
backward and, when `update` holds, the step: the loss is never divided by `accum_steps`."""
import torch.nn.functional as F

from utils.stepper import MicroStepper


def fit(model, optimizer, loader, accum_steps, epochs):
    stepper = MicroStepper(model, optimizer)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            stepper.step(loss, update=(i + 1) % accum_steps == 0 or i + 1 == len(loader))  # expect: TL003
