"""The base of every workspace: it sets the step count and advances it when a batch begins."""


class BaseWorkspace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.global_step = 0

    def begin_batch(self):
        self.global_step += 1
