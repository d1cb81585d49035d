"""PPO: several epochs over the rollout, each minibatch its own update."""
import torch


def ppo_update(policy, optimizer, rollout, ppo_epochs=4, minibatch_size=64, clip=0.2):
    for _ in range(ppo_epochs):
        for idx in torch.randperm(len(rollout.obs)).split(minibatch_size):
            dist, value = policy(rollout.obs[idx])
            ratio = (dist.log_prob(rollout.actions[idx]) - rollout.log_probs[idx]).exp()
            surrogate = torch.min(ratio * rollout.adv[idx], ratio.clamp(1 - clip, 1 + clip) * rollout.adv[idx])
            loss = -surrogate.mean() + 0.5 * (rollout.returns[idx] - value).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
