"""Actor-critic over one encoder: the value loss retains the encoder's graph, which the policy loss (through a
distribution's method) goes through again."""
import torch


def train(encoder, value_head, policy_head, rollouts, optimizer):
    for obs, actions, returns, advantages in rollouts:
        features = encoder(torch.as_tensor(obs))
        value_loss = (value_head(features).squeeze(-1) - returns).pow(2).mean()
        optimizer.zero_grad()
        value_loss.backward(retain_graph=True)
        dist = policy_head(features)
        policy_loss = -(dist.log_prob(actions) * advantages).mean()
        policy_loss.backward()
        optimizer.step()
