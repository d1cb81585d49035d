"""A gradient updater: backpropagates a loss and, when told the window is full, steps and resets."""


class GradUpdater:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def backward_step(self, loss, update=True):
        loss.backward()
        if update:
            self.optimizer.step()
            self.optimizer.zero_grad()
