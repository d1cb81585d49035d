import time


class MetricLogger:
    def __init__(self, delimiter="  "):
        self.delimiter = delimiter
        self.meters = {}

    def update(self, **values):
        self.meters.update(values)

    def log_every(self, iterable, print_freq, header=None):
        i = 0
        start = time.time()
        for obj in iterable:
            yield obj
            if i % print_freq == 0 or i == len(iterable) - 1:
                print(header, f"[{i}/{len(iterable)}]", self.delimiter.join(map(str, self.meters.items())))
            i += 1
        print(header, "total", time.time() - start)
