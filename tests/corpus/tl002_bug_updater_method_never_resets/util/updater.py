"""An updater that backpropagates and, when told, steps; it never resets the gradients."""


class StepUpdater:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def apply(self, loss, update=True):
        loss.backward()
        if update:
            self.optimizer.step()
