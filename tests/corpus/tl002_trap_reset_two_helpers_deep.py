"""An actor-critic agent: the loop calls `update_objectives`, which hands each optimizer to a static
`optimizer_backward` that resets, backpropagates and steps it; a second agent class spells the same methods."""
from typing import Optional

import torch as th
from torch import nn


class AgentBase:
    def __init__(self, act: nn.Module, cri: nn.Module, lr: float = 1e-3):
        self.act = act
        self.cri = cri
        self.act_optimizer: Optional[th.optim.Optimizer] = th.optim.Adam(act.parameters(), lr)
        self.cri_optimizer: Optional[th.optim.Optimizer] = th.optim.Adam(cri.parameters(), lr)
        self.criterion = nn.SmoothL1Loss()

    def update_net(self, batches):
        objs_critic = []
        th.set_grad_enabled(True)
        for state, action, q_label in batches:
            obj_critic, obj_actor = self.update_objectives(state, action, q_label)
            objs_critic.append(obj_critic)
        th.set_grad_enabled(False)
        return sum(objs_critic) / max(len(objs_critic), 1)

    def update_objectives(self, state, action, q_label):
        q_value = self.cri(th.cat((state, action), dim=1))
        obj_critic = self.criterion(q_value, q_label)
        self.optimizer_backward(self.cri_optimizer, obj_critic)

        action_pg = self.act(state)
        obj_actor = self.cri(th.cat((state, action_pg), dim=1)).mean()
        self.optimizer_backward(self.act_optimizer, -obj_actor)
        return obj_critic.item(), obj_actor.item()

    @staticmethod
    def optimizer_backward(optimizer, objective):
        optimizer.zero_grad()
        objective.backward()
        optimizer.step()


class AgentDQN:
    def __init__(self, q_net: nn.Module, lr: float = 1e-3):
        self.act = self.cri = q_net
        self.act_optimizer = self.cri_optimizer = th.optim.Adam(q_net.parameters(), lr)
        self.criterion = nn.SmoothL1Loss()

    def update_objectives(self, state, action, q_label):
        q_value = self.cri(state).gather(1, action.long())
        obj_critic = self.criterion(q_value, q_label)
        self.optimizer_backward(self.cri_optimizer, obj_critic)
        return obj_critic.item(), q_value.detach().mean().item()

    @staticmethod
    def optimizer_backward(optimizer, objective):
        optimizer.zero_grad()
        objective.backward()
        optimizer.step()
