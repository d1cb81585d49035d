"""Two updaters with the same method: `GradUpdater` steps when told, `EveryStepUpdater` on every call."""


class GradUpdater:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def backward_step(self, loss, update=True):
        loss.backward()
        if update:
            self.optimizer.step()
            self.optimizer.zero_grad()


class EveryStepUpdater:
    """Steps on every call: `update` only decides whether it logs."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def backward_step(self, loss, update=True):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        if update:
            print(loss.item())
