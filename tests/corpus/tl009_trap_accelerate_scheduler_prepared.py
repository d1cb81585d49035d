"""Accelerate steps a scheduler it prepared only when the optimizer steps (every loop here); and where it
prepared nothing, accumulates nothing, the horizon counts micro-batches, or the scheduler waits for
`sync_gradients`, stepping on every micro-batch is on time."""
import torch
from accelerate import Accelerator
from transformers import get_linear_schedule_with_warmup

accum = 8
epochs = 3


def prepared_together(model, loader):
    accelerator = Accelerator(gradient_accumulation_steps=accum)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sched_together = get_linear_schedule_with_warmup(optimizer, 100, len(loader) // accum * epochs)
    model, optimizer, loader, sched_together = accelerator.prepare(model, optimizer, loader, sched_together)
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            sched_together.step()
            optimizer.zero_grad()


def prepared_alone(model, loader):
    accelerator = Accelerator(gradient_accumulation_steps=accum)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sched_alone = get_linear_schedule_with_warmup(optimizer, 100, len(loader) // accum * epochs)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    sched_alone = accelerator.prepare(
        sched_alone
    )
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            sched_alone.step()
            optimizer.zero_grad()


def no_accumulation(model, loader):
    accelerator = Accelerator(mixed_precision="bf16")
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sched_plain = get_linear_schedule_with_warmup(optimizer, 100, len(loader) // accum * epochs)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            sched_plain.step()
            optimizer.zero_grad()


def horizon_in_micro_batches(model, loader, max_train_steps):
    accelerator = Accelerator(gradient_accumulation_steps=accum)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sched_long = get_linear_schedule_with_warmup(optimizer, 100, max_train_steps * accum)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            sched_long.step()
            optimizer.zero_grad()


def waits_for_sync(model, loader):
    accelerator = Accelerator(gradient_accumulation_steps=accum)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sched_sync = get_linear_schedule_with_warmup(optimizer, 100, len(loader) // accum * epochs)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            if accelerator.sync_gradients:
                sched_sync.step()
            optimizer.zero_grad()


def optimizer_not_prepared(model, loader):
    accelerator = Accelerator(gradient_accumulation_steps=accum)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    sched_raw = get_linear_schedule_with_warmup(optimizer, 100, len(loader) // accum * epochs)
    model, loader = accelerator.prepare(model, loader)
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            sched_raw.step()
            optimizer.zero_grad()
