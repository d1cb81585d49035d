"""A REINFORCE agent keeps a running reward baseline per step: `estimate` fills a fresh tensor in place with
the rewards under `no_grad()` and blends it with the baseline it is handed back; nothing of the policy's
forward pass enters it, so carrying it across iterations carries no graph."""
import torch
from torch import nn


class Agent(nn.Module):
    def __init__(self, dim: int = 4, steps: int = 5, momentum: float = 0.9):
        super().__init__()
        self.policy = nn.Linear(dim, 1)
        self.steps = steps
        self.momentum = momentum

    def estimate(self, states, rewards, baseline=None):
        fresh = torch.zeros(self.steps)
        with torch.no_grad():
            for step in range(self.steps):
                fresh[step] = rewards[:, step].mean()
            fresh.clamp_(min=0.0)
        if baseline is not None:
            fresh = self.momentum * baseline + (1 - self.momentum) * fresh
        log_probs = self.policy(states).squeeze(-1)
        loss = -((rewards - fresh) * log_probs).mean()
        return loss, fresh


def train(iterations: int = 3):
    agent = Agent()
    optimizer = torch.optim.SGD(agent.parameters(), lr=0.1)
    baseline = None
    for _ in range(iterations):
        states = torch.randn(8, agent.steps, 4)
        rewards = torch.rand(8, agent.steps)
        loss, baseline = agent.estimate(states, rewards, baseline)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return baseline


if __name__ == "__main__":
    train()
