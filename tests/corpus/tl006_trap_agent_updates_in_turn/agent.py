"""An actor-critic agent: one update resets, backpropagates and steps each of its optimizers in turn."""
import torch
import torch.nn.functional as F


class ActorCritic:
    def __init__(self, actor, critic, lr):
        self.actor = actor
        self.critic = critic
        self.critic_optim = torch.optim.Adam(critic.parameters(), lr=lr)
        self.actor_optim = torch.optim.Adam(actor.parameters(), lr=lr)

    def update_parameters(self, memory, batch_size):
        state, action, target = memory.sample(batch_size)
        critic_loss = F.mse_loss(self.critic(state, action), target)
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        actor_loss = -self.critic(state, self.actor(state)).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return critic_loss.item(), actor_loss.item()
