"""SAC-style driver: `agent.update_parameters()` (agent.py) resets each optimizer, backpropagates its loss
and steps it, in turn. The actor's reset comes after the critic's backward, but the actor's own backward
follows it before the actor's step: no step applies zeros."""
from agent import ActorCritic


def run(env, actor, critic, memory, args):
    agent = ActorCritic(actor, critic, args.lr)
    updates = 0
    for episode in range(args.episodes):
        state, done = env.reset(), False
        while not done:
            state, reward, done, _ = env.step(actor(state))
            if len(memory) > args.batch_size:
                for _ in range(args.updates_per_step):
                    critic_loss, actor_loss = agent.update_parameters(memory, args.batch_size)
                    updates += 1
