"""A gradient updater: backpropagates a loss and, when told the window is full, steps and resets."""


class GradUpdater:
    def __init__(self, optimizer, max_norm=None):
        self.optimizer = optimizer
        self.max_norm = max_norm

    def backward_step(self, loss, update=True):
        loss.backward()
        if update:
            self.optimizer.step()
            self.optimizer.zero_grad()

    def state_dict(self):
        return self.optimizer.state_dict()
