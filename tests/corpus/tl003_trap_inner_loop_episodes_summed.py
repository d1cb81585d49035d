"""REINFORCE over a batch of episodes: each episode's return-weighted log-probabilities are summed, then one step."""
import torch


def update(policy, env, optimizer, n_episodes, gamma=0.99):
    optimizer.zero_grad()
    for _ in range(n_episodes):
        log_probs, rewards = [], []
        state, done = env.reset(), False
        while not done:
            dist = policy(torch.as_tensor(state))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            state, reward, done, _ = env.step(action.item())
            rewards.append(reward)
        returns, running = [], 0.0
        for reward in reversed(rewards):
            running = reward + gamma * running
            returns.insert(0, running)
        loss = -(torch.stack(log_probs) * torch.tensor(returns)).sum() / n_episodes
        loss.backward()
    optimizer.step()
