"""A policy whose REINFORCE loss subtracts a per-step baseline: the running mean of the rewards, gathered
under `no_grad()` while sampling and blended with the baseline the trainer hands back in."""
import torch
from torch import nn

__all__ = ["FlowPolicy"]


class FlowPolicy(nn.Module):
    def __init__(self, dim: int, steps: int, moving_coeff: float = 0.95):
        super().__init__()
        self.net = nn.Linear(dim, 1)
        self.steps = steps
        self.conf = {"moving_coeff": moving_coeff}

    def reinforce_forward(self, in_baseline=None, batch_size: int = 8):
        reward_baseline = torch.zeros([self.steps, 2])
        with torch.no_grad():
            states = torch.randn(batch_size, self.steps, self.net.in_features)
            rewards = torch.rand(batch_size, self.steps)
            for step in range(self.steps):
                reward_baseline[step][0] += batch_size
                reward_baseline[step][1] += rewards[:, step].sum()
        for step in range(reward_baseline.size(0)):
            if reward_baseline[step, 0] == 0:
                reward_baseline[step, 0] += 1.
        baseline_per_step = reward_baseline[:, 1] / reward_baseline[:, 0]
        if in_baseline is not None:
            baseline_per_step = baseline_per_step * (1. - self.conf["moving_coeff"]) \
                + in_baseline * self.conf["moving_coeff"]
        log_probs = self.net(states).squeeze(-1)
        loss = -((rewards - baseline_per_step) * log_probs).mean()
        return loss, rewards.mean().item(), baseline_per_step
