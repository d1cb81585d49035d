"""nanoGPT turned into a chat fine-tune: `get_batch` still cuts fixed blocks from one stream, but then sets
the targets of the prompt positions to -1, so each micro-batch's mean runs over a different number of
answer tokens, and dividing it by `gradient_accumulation_steps` weighs short answers more."""
import numpy as np
import torch
import torch.nn.functional as F

block_size = 512
batch_size = 8
data = np.memmap("data/chat.bin", dtype=np.uint16, mode="r")
is_prompt = np.memmap("data/chat_prompt_mask.bin", dtype=np.bool_, mode="r")


def get_batch():
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    prompt = torch.stack([torch.from_numpy(is_prompt[i + 1:i + 1 + block_size].copy()) for i in ix])
    y[prompt] = -1
    return x.cuda(), y.cuda()


def finetune(model, optimizer, max_iters, gradient_accumulation_steps=4):
    for it in range(max_iters * gradient_accumulation_steps):
        X, Y = get_batch()
        logits = model(X)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1), ignore_index=-1)
        loss = loss / gradient_accumulation_steps  # expect: TL017
        loss.backward()
        if (it + 1) % gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
