"""PPO update as a notebook cell writes it: the critic's loss retains its graph, but the actor's loss comes
from the actor's own forward and a detached advantage."""
import torch
import torch.nn.functional as F

states = torch.cat(agent.states).view(-1, 3)
actions = torch.cat(agent.actions)
returns = torch.cat(agent.returns).detach()
values = torch.cat(agent.values).detach()
log_probs = torch.cat(agent.log_probs).detach()
advantages = returns - values

for state, action, old_log_prob, return_, adv in ppo_iter(8, 64, states, actions, log_probs, returns, advantages):
    _, dist = actor(state)
    log_prob = dist.log_prob(action)
    ratio = (log_prob - old_log_prob).exp()
    surr_loss = ratio * adv
    clipped_surr_loss = torch.clamp(ratio, 0.8, 1.2) * adv
    entropy = dist.entropy().mean()
    actor_loss = -torch.min(surr_loss, clipped_surr_loss).mean() - entropy * 0.005

    value = critic(state)
    critic_loss = F.mse_loss(value, return_)

    critic_optimizer.zero_grad()
    critic_loss.backward(retain_graph=True)  # expect: TL005
    critic_optimizer.step()

    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
