"""The flag `no_sync()` sets, set by hand before the forward (nanoGPT's idiom), with a micro-step counter."""
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, get_batch, optimizer, ddp_local_rank, gradient_accumulation_steps, max_iters, ctx):
    model = DDP(model, device_ids=[ddp_local_rank])
    micro_step = 0
    for it in range(max_iters * gradient_accumulation_steps):
        X, Y = get_batch("train")
        model.require_backward_grad_sync = micro_step == gradient_accumulation_steps - 1
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        loss.backward()
        micro_step += 1
        if micro_step == gradient_accumulation_steps:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            micro_step = 0
