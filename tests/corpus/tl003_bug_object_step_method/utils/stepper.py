"""A micro-step helper: backpropagates a loss and, when told the window is full, steps and resets."""


class MicroStepper:
    def __init__(self, model, optimizer, max_norm=1.0):
        self.model = model
        self.optimizer = optimizer
        self.max_norm = max_norm

    def step(self, loss, update=True):
        loss.backward()
        if update:
            self.optimizer.step()
            self.optimizer.zero_grad()
