"""Packed supervised fine-tuning: inputs are cut from the token stream, but the targets from a separate
label stream in which the prompt tokens are -100. Every window has the same length, yet the number of
answer tokens in it varies, so dividing the token mean by `grad_accum` weighs short answers more."""
import torch
import torch.nn.functional as F


def train(model, optimizer, tokens, labels, block=2048, grad_accum=16, steps=1000):
    for step in range(steps * grad_accum):
        i = torch.randint(len(tokens) - block - 1, (1,)).item()
        x = tokens[i:i + block].unsqueeze(0).cuda()
        y = labels[i + 1:i + 1 + block].unsqueeze(0).cuda()
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-100)
        (loss / grad_accum).backward()  # expect: TL017
        if (step + 1) % grad_accum == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
