"""DDPG: the actor's loss runs the critic again on the actor's action, so the critic loss's graph is not reused."""
import torch
import torch.nn.functional as F


def train(actor, critic, actor_target, critic_target, buffer, steps, gamma=0.99):
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-4)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    for _ in range(steps):
        state, action, reward, next_state, done = buffer.sample(128)
        state = torch.FloatTensor(state)
        action = torch.FloatTensor(action)
        reward = torch.FloatTensor(reward).unsqueeze(1)
        next_state = torch.FloatTensor(next_state)
        done = torch.FloatTensor(done).unsqueeze(1)
        with torch.no_grad():
            target_q = reward + gamma * (1 - done) * critic_target(next_state, actor_target(next_state))

        critic_loss = F.mse_loss(critic(state, action), target_q)
        critic_opt.zero_grad()
        critic_loss.backward(retain_graph=True)  # expect: TL005
        critic_opt.step()

        actor_loss = -critic(state, actor(state)).mean()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()
