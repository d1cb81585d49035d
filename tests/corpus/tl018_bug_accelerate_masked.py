"""Multi-label fine-tuning with Accelerate: the label mask is applied, the sum is missing."""
import torch.nn.functional as F
from accelerate import Accelerator


def train(model, optimizer, loader, epochs):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for _ in range(epochs):
        for batch in loader:
            logits = model(batch["pixel_values"])
            loss = F.binary_cross_entropy_with_logits(logits, batch["labels"], reduction="none")
            loss = loss * batch["label_mask"]
            loss = loss.float() / batch["label_mask"].sum()
            accelerator.backward(loss)  # expect: TL018
            optimizer.step()
            optimizer.zero_grad()
