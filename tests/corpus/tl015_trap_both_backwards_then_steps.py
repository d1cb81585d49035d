"""Actor-critic on one shared trunk: both losses backpropagate before either optimizer steps."""
import torch
import torch.nn.functional as F


class ActorCritic:
    def __init__(self, trunk, actor, critic):
        self.trunk, self.actor, self.critic = trunk, actor, critic
        self.actor_optim = torch.optim.Adam(list(trunk.parameters()) + list(actor.parameters()), lr=3e-4)
        self.critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)

    def update(self, rollouts):
        for obs, actions, returns in rollouts:
            features = self.trunk(obs)
            values = self.critic(features).squeeze(-1)
            log_probs = self.actor(features).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
            advantages = (returns - values).detach()
            self.actor_optim.zero_grad()
            self.critic_optim.zero_grad()
            policy_loss = -(log_probs * advantages).mean()
            policy_loss.backward(retain_graph=True)
            value_loss = F.mse_loss(values, returns)
            value_loss.backward()
            self.actor_optim.step()
            self.critic_optim.step()
