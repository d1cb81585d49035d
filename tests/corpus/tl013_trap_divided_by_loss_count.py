"""Under `accelerator.accumulate`, the losses of several heads are averaged and a contrastive logit is
divided by a temperature: neither division is by the accumulation count."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator

TEMPERATURE = 0.07


def train(encoder, heads, loader, accum_steps=8):
    accelerator = Accelerator(gradient_accumulation_steps=accum_steps, mixed_precision="bf16")
    optimizer = torch.optim.AdamW(list(encoder.parameters()) + list(heads.parameters()), lr=3e-4)
    encoder, heads, optimizer, loader = accelerator.prepare(encoder, heads, optimizer, loader)
    for images, views, labels in loader:
        with accelerator.accumulate(encoder):
            features = encoder(images)
            logits = features @ encoder(views).T / TEMPERATURE
            contrastive = F.cross_entropy(logits, torch.arange(len(logits), device=logits.device))
            supervised = [F.cross_entropy(head(features), labels) for head in heads]
            loss = contrastive + sum(supervised) / len(supervised)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
