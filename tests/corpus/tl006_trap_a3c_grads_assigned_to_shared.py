"""A3C: the worker backpropagates on its local copy, then hands each gradient to the shared model's parameter before
the shared optimizer steps. Setting `.grad` between backward and step is the point, not a wiped gradient."""
import torch
import torch.nn.functional as F


def worker(shared, local, shared_optimizer, env_batches, gamma: float) -> None:
    for states, actions, returns in env_batches:
        local.load_state_dict(shared.state_dict())
        local.zero_grad()
        logits, values = local(states)
        advantage = returns - values.squeeze(-1)
        policy_loss = -(F.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1) * advantage.detach()).mean()
        loss = policy_loss + 0.5 * advantage.pow(2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(local.parameters(), 40.0)
        for local_param, shared_param in zip(local.parameters(), shared.parameters()):
            shared_param.grad = local_param.grad
        shared_optimizer.step()
