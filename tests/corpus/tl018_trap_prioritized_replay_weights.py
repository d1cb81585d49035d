"""DQN with prioritized replay: per-sample TD errors weighted by importance, then averaged."""
import torch
import torch.nn.functional as F


def learn(q_net, target_net, buffer, optimizer, steps, batch_size=64, gamma=0.99):
    for _ in range(steps):
        obs, actions, rewards, next_obs, dones, weights, indices = buffer.sample(batch_size)
        q = q_net(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = rewards + gamma * (1 - dones) * target_net(next_obs).max(1).values
        td_loss = F.smooth_l1_loss(q, target, reduction="none")
        buffer.update_priorities(indices, td_loss.detach().abs().cpu().numpy())
        loss = torch.mean(weights * td_loss)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
        optimizer.step()
