"""The rollout helper returns the state it was given, but rebound to the cell's output first: the new
state carries this iteration's graph into the next one."""
import torch


def advance(cell, state, action):
    state = cell(torch.cat([state, action], dim=-1))
    return state


def train(cell, decoder, episodes, optimizer, state_dim):
    state = torch.zeros(1, state_dim)
    for actions, targets in episodes:
        state = advance(cell, state, actions)  # expect: TL012
        loss = (decoder(state) - targets).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
