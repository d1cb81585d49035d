"""Generators of the project that skip elements (`continue` before the `yield`) or hand each twice: what the
loop's value counts is not the micro-batches, and nothing is said of the last window."""
from common.logger import MetricLogger


def train(model, loader, optimizer, accum, iters):
    metric_logger = MetricLogger()
    loader = iter(loader)
    for i in metric_logger.log_every(range(iters), 50):
        (model(next(loader)) / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_pairs(model, loader, optimizer, accum, iters):
    metric_logger = MetricLogger()
    loader = iter(loader)
    for i in metric_logger.log_pairs(range(iters), 50):
        (model(next(loader)) / accum).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
