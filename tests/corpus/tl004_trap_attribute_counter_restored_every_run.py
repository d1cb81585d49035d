"""`run()` always loads the saved state first, which sets `self.global_step` to the step it was saved at: every
run is a resumed one, and where its count starts is not known here."""
import torch
from torch import nn


class Workspace:
    def __init__(self, model, loader, accum):
        self.model = model
        self.loader = loader
        self.accum = accum
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.global_step = 0

    def load_state(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.global_step = state["global_step"]

    def run(self, path):
        self.load_state(path)
        for x, y in self.loader:
            loss = nn.functional.cross_entropy(self.model(x), y) / self.accum
            loss.backward()
            if self.global_step % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.global_step += 1
