"""Both losses go through one forward of the actor: the critic's loss takes the actor's action without a detach,
and the actor's loss backpropagates through that same action again."""
import torch
import torch.nn.functional as F


def train(actor, critic, buffer, steps):
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-4)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    for _ in range(steps):
        state, target_q = buffer.sample(128)
        state = torch.FloatTensor(state)
        target_q = torch.FloatTensor(target_q)
        action = actor(state)

        critic_loss = F.mse_loss(critic(state, action), target_q)
        critic_opt.zero_grad()
        critic_loss.backward(retain_graph=True)
        critic_opt.step()

        actor_loss = -critic(state, action).mean()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()
