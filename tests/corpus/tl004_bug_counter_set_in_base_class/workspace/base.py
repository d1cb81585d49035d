"""The base of every workspace: it sets the step count, and writes back what a checkpoint saved."""
import torch


class BaseWorkspace:
    include_keys = ("global_step", "epoch")

    def __init__(self, cfg):
        self.cfg = cfg
        self.global_step = 0
        self.epoch = 0

    def run(self):
        raise NotImplementedError

    def load_payload(self, payload):
        for key in self.include_keys:
            if key in payload:
                self.__dict__[key] = payload[key]

    def load_checkpoint(self, path):
        payload = torch.load(path)
        self.load_payload(payload)
        return payload
