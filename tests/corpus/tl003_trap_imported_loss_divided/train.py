"""Policy-gradient trainer: each micro-batch's token sum is divided by the whole window's token count by a
function of the project, so the micro-batch losses add up to the window's token mean."""
from ops.masked import masked_sum_over


def train(policy, optimizer, batches, accumulation_steps, window_token_counts):
    for index, batch in enumerate(batches):
        logprobs = policy(batch["input_ids"])
        denominator = window_token_counts[index // accumulation_steps]
        loss = masked_sum_over(-logprobs * batch["advantages"], batch["mask"], denominator)
        loss.backward()
        if (index + 1) % accumulation_steps == 0 or index + 1 == len(batches):
            optimizer.step()
            optimizer.zero_grad()


def train_grpo(policy, optimizer, samples, accumulation_steps, token_counts, dp_world_size):
    from ops.masked import masked_mean

    local_step = 0
    for sample_idx, sample in enumerate(samples):
        new_logprobs = policy(sample["query_responses"])
        batch_start = (sample_idx // accumulation_steps) * accumulation_steps
        loss_denominator = token_counts[batch_start]
        loss = masked_mean(-new_logprobs * sample["advantages"], sample["response_mask"], None, loss_denominator)
        loss = loss * dp_world_size
        loss.backward()
        local_step += 1
        if local_step % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    if local_step % accumulation_steps != 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
