"""nanoGPT: the DDP flag is set by hand to sync only on the last micro-batch of the inner loop."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train(raw_model, ddp_local_rank, get_batch, optimizer, max_iters, gradient_accumulation_steps):
    model = DDP(raw_model, device_ids=[ddp_local_rank])
    for it in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
            X, Y = get_batch("train")
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
