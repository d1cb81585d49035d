"""Agent `update()` methods that need the retained graph: the Q loss goes through the policy's action that
the policy loss reaches again, the loss is handed back to the caller, or the batch comes in as a parameter."""
import torch
import torch.nn as nn


class Agent:
    def __init__(self, qnet, policy_net):
        self.qnet, self.policy_net = qnet, policy_net
        self.criterion = nn.MSELoss()
        self.q_optimizer = torch.optim.Adam(qnet.parameters(), lr=3e-4)
        self.policy_optimizer = torch.optim.Adam(policy_net.parameters(), lr=3e-4)

    def update(self, state, target_q):
        state = torch.FloatTensor(state)
        target_q = torch.FloatTensor(target_q)
        new_action = self.policy_net(state)
        q_loss = self.criterion(self.qnet(state, new_action), target_q)
        self.q_optimizer.zero_grad()
        q_loss.backward(retain_graph=True)
        self.q_optimizer.step()
        policy_loss = -self.qnet(state, new_action).mean() + new_action.pow(2).mean()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

    def pretrain(self, state, target_q):
        q_loss = self.criterion(self.qnet(torch.FloatTensor(state), self.policy_net(torch.FloatTensor(state))),
                                torch.FloatTensor(target_q))
        self.q_optimizer.zero_grad()
        q_loss.backward(retain_graph=True)
        self.q_optimizer.step()
        return q_loss

    def fit_features(self, features, target_q):
        q_loss = self.criterion(self.qnet(features, self.policy_net(features)), target_q)
        self.q_optimizer.zero_grad()
        q_loss.backward(retain_graph=True)
        self.q_optimizer.step()


def main(qnet, policy_net, batches, features, targets):
    agent = Agent(qnet, policy_net)
    for state, target_q in batches:
        agent.update(state, target_q)
    for state, target_q in batches:
        q_loss = agent.pretrain(state, target_q)
        q_loss.backward()
    for _ in range(10):
        agent.fit_features(features, targets)
