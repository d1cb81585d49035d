"""A step helper: backward, step and reset, on every call."""


class Stepper:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step(self, loss):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
