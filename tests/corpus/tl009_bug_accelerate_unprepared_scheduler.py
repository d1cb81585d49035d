"""Accelerate accumulates `accum` micro-batches per update, and the prepared optimizer steps once per window; the
scheduler was never handed to `accelerator.prepare`, so it advances on every micro-batch, while its horizon counts
updates: the schedule runs `accum` times too fast."""
import torch
from accelerate import Accelerator
from transformers import get_linear_schedule_with_warmup

accum = 8
epochs = 3
accelerator = Accelerator(gradient_accumulation_steps=accum)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
lr_scheduler = get_linear_schedule_with_warmup(
    optimizer=optimizer,
    num_warmup_steps=100,
    num_training_steps=int(len(loader) / accum) * epochs,
)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

for epoch in range(epochs):
    for batch in loader:
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()  # expect: TL009
            optimizer.zero_grad()
