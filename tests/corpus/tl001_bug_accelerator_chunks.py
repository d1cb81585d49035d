"""Long documents split into chunks; the chunk losses are summed per document."""
from accelerate import Accelerator
from transformers import AutoModelForMaskedLM
import torch


def split_batch(batch, size):
    keys = list(batch)
    for start in range(0, batch[keys[0]].size(1), size):
        yield {k: v[:, start:start + size] for k, v in batch.items()}


def train(args, train_dataloader):
    accelerator = Accelerator(mixed_precision="bf16")
    model = AutoModelForMaskedLM.from_pretrained(args.model_name)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
    for batch in train_dataloader:
        optimizer.zero_grad()
        loss = 0.0
        for chunk in split_batch(batch, args.chunk_size):
            outputs = model(**chunk)
            loss = loss + outputs.loss
            accelerator.backward(loss)  # expect: TL001
        optimizer.step()
