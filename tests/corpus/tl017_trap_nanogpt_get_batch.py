"""nanoGPT-style pretraining: `get_batch` cuts inputs and targets of `block_size` tokens from one packed
token stream, so every micro-batch holds `batch_size * block_size` targets (`ignore_index=-1` never
matches a token id) and dividing the token mean by the accumulation count is the window's token mean."""
import numpy as np
import torch
import torch.nn.functional as F

block_size = 1024
batch_size = 12
device = "cuda"
train_data = np.memmap("data/train.bin", dtype=np.uint16, mode="r")
val_data = np.memmap("data/val.bin", dtype=np.uint16, mode="r")


def get_batch(split):
    data = train_data if split == "train" else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x, y


def train(model, optimizer, max_iters, gradient_accumulation_steps, grad_clip=1.0):
    scaler = torch.cuda.amp.GradScaler()
    X, Y = get_batch("train")
    for it in range(max_iters * gradient_accumulation_steps):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = model(X)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1), ignore_index=-1)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
        if (it + 1) % gradient_accumulation_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
