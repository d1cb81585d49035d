"""The trainer carries the policy's baseline from one iteration to the next: the policy computes it with its
value head, so the next iteration's backward goes back into this one's freed graph."""
import torch

from flow.model import FlowPolicy, FlowPretrain


class Runner:
    def __init__(self):
        self.model = None

    def get_model(self, task: str, dim: int = 4, steps: int = 6):
        if task == "pretrain":
            self.model = FlowPretrain(dim)
        else:
            self.model = FlowPolicy(dim, steps)

    def train_policy(self, iterations: int, lr: float = 1e-3):
        self.get_model("policy")
        optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        moving_baseline = None
        for _ in range(iterations):
            optimizer.zero_grad()
            loss, reward, moving_baseline = self.model.reinforce_forward(in_baseline=moving_baseline)  # expect: TL012
            loss.backward()
            optimizer.step()
            print(f"reward {reward:.3f}")
