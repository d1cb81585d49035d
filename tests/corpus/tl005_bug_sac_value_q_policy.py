"""SAC update: the value, Q and policy losses each come from their own forward passes (the policy's through a
helper method whose locals share the loop's names), so the value and Q losses' retained graphs are never reused."""
import torch
import torch.nn as nn
from torch.distributions import Normal


class SAC:
    def __init__(self, policy_net, value_net, target_value_net, q_net, gamma=0.99):
        self.policy_net, self.value_net, self.target_value_net, self.q_net = policy_net, value_net, target_value_net, q_net
        self.gamma = gamma
        self.policy_optimizer = torch.optim.Adam(policy_net.parameters(), lr=3e-4)
        self.value_optimizer = torch.optim.Adam(value_net.parameters(), lr=3e-4)
        self.q_optimizer = torch.optim.Adam(q_net.parameters(), lr=3e-4)
        self.value_criterion = nn.MSELoss()
        self.q_criterion = nn.MSELoss()

    def get_action_log_prob(self, state):
        mu, log_sigma = self.policy_net(state)
        dist = Normal(mu, torch.exp(log_sigma))
        z = dist.sample()
        action = torch.tanh(z)
        log_prob = dist.log_prob(z) - torch.log(1 - action.pow(2) + 1e-7)
        return action, log_prob, z

    def update(self, s, a, r, s_, d, steps, batch_size):
        s, a, r = torch.tensor(s).float(), torch.tensor(a).float(), torch.tensor(r).float()
        s_, d = torch.tensor(s_).float(), torch.tensor(d).float()
        for _ in range(steps):
            index = torch.randint(0, s.size(0), (batch_size,))
            bn_s, bn_a, bn_r, bn_s_, bn_d = s[index], a[index], r[index], s_[index], d[index]
            next_q_value = bn_r + (1 - bn_d) * self.gamma * self.target_value_net(bn_s_)
            excepted_value = self.value_net(bn_s)
            excepted_q = self.q_net(bn_s, bn_a)
            action, log_prob, z = self.get_action_log_prob(bn_s)
            excepted_new_q = self.q_net(bn_s, action)
            next_value = excepted_new_q - log_prob

            v_loss = self.value_criterion(excepted_value, next_value.detach())
            q_loss = self.q_criterion(excepted_q, next_q_value.detach())
            pi_loss = (log_prob * (log_prob - excepted_new_q + excepted_value).detach()).mean()

            self.value_optimizer.zero_grad()
            v_loss.backward(retain_graph=True)  # expect: TL005
            self.value_optimizer.step()
            self.q_optimizer.zero_grad()
            q_loss.backward(retain_graph=True)  # expect: TL005
            self.q_optimizer.step()
            self.policy_optimizer.zero_grad()
            pi_loss.backward()
            self.policy_optimizer.step()
