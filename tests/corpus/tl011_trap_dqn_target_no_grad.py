"""DQN: the TD target is computed under no_grad; the loss's graph comes from the policy network."""
import torch
import torch.nn.functional as F


def optimize(policy_net, target_net, replay, optimizer, batch_size, gamma, updates):
    for _ in range(updates):
        states, actions, rewards, next_states, dones = replay.sample(batch_size)
        with torch.no_grad():
            next_q = target_net(next_states).max(1).values
            target = rewards + gamma * next_q * (1 - dones)
        q = policy_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q, target)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
