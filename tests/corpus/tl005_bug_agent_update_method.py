"""An agent's `update()`: both backwards retain, but the policy's loss comes from a second forward of the
Q-network, and `update()` ends with the policy's backward: neither graph is used again."""
import numpy as np
import torch
import torch.nn as nn


class Agent:
    def __init__(self, qnet, policy_net, buffer):
        self.qnet, self.policy_net, self.buffer = qnet, policy_net, buffer
        self.q_criterion = nn.MSELoss()
        self.q_optimizer = torch.optim.Adam(qnet.parameters(), lr=3e-4)
        self.policy_optimizer = torch.optim.Adam(policy_net.parameters(), lr=3e-4)

    def update(self, batch_size, gamma=0.99):
        state, action, reward, target_q = self.buffer.sample(batch_size)
        state = torch.FloatTensor(state)
        action = torch.FloatTensor(action)
        target_q = torch.FloatTensor(np.float32(target_q)).unsqueeze(-1)

        predict_q = self.qnet(state, action)
        new_action = self.policy_net(state)
        predict_new_q = self.qnet(state, new_action)
        q_loss = self.q_criterion(predict_q, target_q)
        policy_loss = -torch.mean(predict_new_q)

        self.q_optimizer.zero_grad()
        q_loss.backward(retain_graph=True)  # expect: TL005
        self.q_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward(retain_graph=True)  # expect: TL005
        self.policy_optimizer.step()
        return q_loss.item(), policy_loss.item()


def main(qnet, policy_net, buffer, env, episodes, batch_size=64):
    agent = Agent(qnet, policy_net, buffer)
    for episode in range(episodes):
        env.reset()
        for _ in range(10):
            q_loss, policy_loss = agent.update(batch_size)
