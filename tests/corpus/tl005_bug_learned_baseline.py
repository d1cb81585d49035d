"""Actor-critic with a running baseline that keeps the critic's graph."""
import torch


def train(policy, critic, rollouts, optimizer, beta=0.9):
    baseline = torch.zeros(())
    for states, actions, returns in rollouts:
        log_probs = policy(states).log_prob(actions)
        baseline = beta * baseline + (1 - beta) * critic(states).mean()
        advantage = returns - baseline
        loss = -(log_probs * advantage).mean() + advantage.pow(2).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)  # expect: TL005
        optimizer.step()
