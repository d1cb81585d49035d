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
