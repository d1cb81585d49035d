"""A Q-learning agent that averages its update over several replay micro-batches, one optimizer step each."""
import torch
import torch.nn as nn


class Agent:
    def __init__(self, q_net, target_net, buffer, n_micro=4, batch_size=64, gamma=0.99):
        self.q_net = q_net
        self.target_net = target_net
        self.buffer = buffer
        self.n_micro = n_micro
        self.batch_size = batch_size
        self.gamma = gamma
        self.loss_fn = nn.SmoothL1Loss()
        self.optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-4)

    def update(self):
        self.optimizer.zero_grad()
        for _ in range(self.n_micro):
            state, action, reward, next_state, done = self.buffer.sample(self.batch_size)
            q = self.q_net(state).gather(1, action.unsqueeze(1)).squeeze(1)
            with torch.no_grad():
                target = reward + self.gamma * (1 - done) * self.target_net(next_state).max(1).values
            loss = self.loss_fn(q, target)
            loss.backward()  # expect: TL003
        self.optimizer.step()
