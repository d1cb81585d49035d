"""World-model rollout: each predicted latent state is the next step's input."""
import torch
import torch.nn.functional as F


def train_dynamics(dynamics, encoder, episodes, optimizer, horizon=50):
    for obs, actions in episodes:
        state = encoder(obs[0]).detach()
        for t in range(horizon):
            state = dynamics(state, actions[t])  # expect: TL012
            loss = F.mse_loss(state, encoder(obs[t + 1]).detach())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
