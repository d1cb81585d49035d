"""An "or" next to the window test that is no end test: the counter compared with a value that changes on
every micro-batch (`len(batch)`), or with a literal the loop's length is not; the last window is still left."""
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, accum, epochs):
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            (F.mse_loss(model(x), y) / accum).backward()
            if (step + 1) % accum == 0 or step == len(x) - 1:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()


def train_first_window_short(model, optimizer, loader, accum, epochs):
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            (F.mse_loss(model(x), y) / accum).backward()
            if (step + 1) % accum == 0 or step == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
