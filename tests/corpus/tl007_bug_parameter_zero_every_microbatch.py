"""Each parameter's gradient zeroed on every micro-batch while the step waits for a full window."""
import torch


def train(model, loader, criterion, accum=4):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for i, (inputs, targets) in enumerate(loader):
        for group in optimizer.param_groups:  # expect: TL007
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.zero_()
        loss = criterion(model(inputs), targets) / accum
        loss.backward()
        if (i + 1) % accum == 0 or (i + 1) == len(loader):
            optimizer.step()
