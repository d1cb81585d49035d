"""The divided loss is only logged; the backward still runs on the raw mean."""
import torch.nn as nn


def train(model, loader, optimizer, writer, accumulation_steps=8):
    criterion = nn.NLLLoss()
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        scaled = loss / accumulation_steps
        writer.add_scalar("loss/micro", scaled.item(), i)
        loss.backward()  # expect: TL003
        if (i + 1) % accumulation_steps == 0 or (i + 1) == len(loader):
            optimizer.step()
            optimizer.zero_grad()
