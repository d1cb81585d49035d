"""REINFORCE on CartPole: `env.step(action)` is an environment, not an optimizer."""
import gymnasium as gym
import torch
from torch.distributions import Categorical


def discounted_returns(rewards, gamma):
    returns, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    return (returns - returns.mean()) / (returns.std() + 1e-8)


def reinforce(policy, episodes=500, gamma=0.99):
    env = gym.make("CartPole-v1")
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(episodes):
        state, _ = env.reset(seed=episode)
        log_probs, rewards = [], []
        done = False
        while not done:
            dist = Categorical(policy(torch.as_tensor(state, dtype=torch.float32)))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            state, reward, terminated, truncated, _ = env.step(action.item())
            rewards.append(reward)
            done = terminated or truncated
        loss = -(torch.stack(log_probs) * discounted_returns(rewards, gamma)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
