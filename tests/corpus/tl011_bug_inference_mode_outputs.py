"""HF-style: the forward pass went under `inference_mode()` with the metrics; the loss is read later."""
import torch


def train_epoch(model, dataloader, optimizer, lr_scheduler, metric):
    model.train()
    for batch in dataloader:
        with torch.inference_mode():
            outputs = model(**batch)
            predictions = outputs.logits.argmax(dim=-1)
            metric.add_batch(predictions=predictions, references=batch["labels"])
        loss = outputs.loss
        loss.backward()  # expect: TL011
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
