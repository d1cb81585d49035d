"""A micro-batch counter: the scaler steps at the window's end but updates its scale on every micro-batch."""
import torch


def train(model, batches, optimizer, grad_accum, total_micro_batches):
    scaler = torch.cuda.amp.GradScaler()
    micro = 0
    for _ in range(total_micro_batches):
        inputs, targets = next(batches)
        with torch.autocast("cuda"):
            loss = torch.nn.functional.mse_loss(model(inputs), targets) / grad_accum
        scaler.scale(loss).backward()
        micro += 1
        if micro == grad_accum:  # expect: TL010
            scaler.step(optimizer)
            optimizer.zero_grad()
            micro = 0
        scaler.update()  # expect: TL014
