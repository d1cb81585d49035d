"""A micro-batch counter compared with `>=`, the loss divided first."""


def train(cfg, model, stream, optimizer, criterion):
    micro = 0
    for x, y in stream:
        loss = criterion(model(x), y) / cfg.train.accum
        loss.backward()
        micro += 1
        if micro >= cfg.train.accum:
            optimizer.step()
            optimizer.zero_grad()
            micro = 0
    if micro:  # the last, partial window
        optimizer.step()
        optimizer.zero_grad()
