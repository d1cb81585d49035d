"""A logger class of the file whose `log_every` hands on each element of the range it walks: `i` numbers the
micro-batches from 0 in every epoch, and the last partial window leaks into the next epoch."""
import time


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def log_every(self, iterable, print_freq):
        start = time.time()
        for obj in iterable:
            yield obj
        print(time.time() - start)


def train(model, loader, optimizer, accum, iters):
    metric_logger = MetricLogger()
    loader = iter(loader)
    for epoch in range(3):
        for i in metric_logger.log_every(range(iters), 50):
            (model(next(loader)) / accum).backward()
            if (i + 1) % accum == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
