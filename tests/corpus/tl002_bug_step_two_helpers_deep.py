"""The helper two calls below the loop backpropagates and steps but resets nothing, and neither does the loop:
the second agent class spells the same methods."""
import torch as th
from torch import nn


class AgentBase:
    def __init__(self, cri: nn.Module, lr: float = 1e-3):
        self.cri = cri
        self.cri_optimizer = th.optim.Adam(cri.parameters(), lr)
        self.criterion = nn.MSELoss()

    def update_net(self, batches):
        for state, q_label in batches:
            self.update_objectives(state, q_label)

    def update_objectives(self, state, q_label):
        obj_critic = self.criterion(self.cri(state), q_label)
        self.optimizer_backward(self.cri_optimizer, obj_critic)
        return obj_critic.item()

    @staticmethod
    def optimizer_backward(optimizer, objective):
        objective.backward()
        optimizer.step()  # expect: TL002


class AgentDQN:
    def update_objectives(self, state, q_label):
        obj_critic = self.criterion(self.cri(state), q_label)
        self.optimizer_backward(self.cri_optimizer, obj_critic)
        return obj_critic.item()

    @staticmethod
    def optimizer_backward(optimizer, objective):
        objective.backward()
        optimizer.step()
