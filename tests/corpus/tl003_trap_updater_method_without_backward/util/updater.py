"""`backward_step` backpropagates and steps; `record` keeps the loss's value; `step_only` steps the gradients
already backpropagated."""


class GradUpdater:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def backward_step(self, loss, update=True):
        loss.backward()
        if update:
            self.optimizer.step()
            self.optimizer.zero_grad()

    def step_only(self):
        self.optimizer.step()
        self.optimizer.zero_grad()

    def record(self, loss):
        self.last = loss.item()
