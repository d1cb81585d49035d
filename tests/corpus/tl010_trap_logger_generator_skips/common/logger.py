class MetricLogger:
    def __init__(self, delimiter="  "):
        self.delimiter = delimiter

    def log_every(self, iterable, print_freq, header=None):
        for obj in iterable:
            if obj is None:
                continue
            yield obj

    def log_pairs(self, iterable, print_freq):
        for obj in iterable:
            yield obj
            yield obj
