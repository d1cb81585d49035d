"""The mirror bug: a 1-based counter with the 0-based condition."""
import torch


def train(cfg, model, train_loader, criterion):
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.train.lr)
    for epoch in range(cfg.train.epochs):
        for batch_idx, (x, y) in enumerate(train_loader, start=1):
            loss = criterion(model(x), y) / cfg.train.accum
            loss.backward()
            if (batch_idx + 1) % cfg.train.accum == 0:  # expect: TL004, TL010
                optimizer.step()
                optimizer.zero_grad()
