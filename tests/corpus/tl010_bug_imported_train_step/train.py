"""The window's step runs in `train_step` (lib/steps.py) when `sync` holds: `(it + 1) % accum_steps == 0`
cannot hold on the last micro-batch of an epoch whose length is not a multiple of `accum_steps`."""
import torch

from lib.steps import train_step


def main(model, loader, epochs, accum_steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        for it, batch in enumerate(loader):
            train_step(model, batch, optimizer, accum_steps, sync=(it + 1) % accum_steps == 0)  # expect: TL010
