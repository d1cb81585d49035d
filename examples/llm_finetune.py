"""Supervised fine-tuning of a small language model on padded prompt/answer pairs, two ways:
a plain PyTorch loop and an Accelerate loop, both with gradient accumulation."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader

IGNORE = -100
ACCUMULATION_STEPS = 8


def collate(examples, pad_id):
    """Pad a batch of (prompt, answer) token lists; only answer tokens are trained on."""
    longest = max(len(prompt) + len(answer) for prompt, answer in examples)
    input_ids = torch.full((len(examples), longest), pad_id)
    labels = torch.full((len(examples), longest), IGNORE)
    for row, (prompt, answer) in enumerate(examples):
        tokens = torch.tensor(prompt + answer)
        input_ids[row, :len(tokens)] = tokens
        labels[row, len(prompt):len(tokens)] = torch.tensor(answer)
    return input_ids, labels


def next_token_loss(model, input_ids, labels):
    logits = model(input_ids[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=IGNORE)


def finetune(model, dataset, pad_id, epochs=2):
    loader = DataLoader(dataset, batch_size=4, shuffle=True, collate_fn=lambda b: collate(b, pad_id))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.0)
    model.train()
    for epoch in range(epochs):
        for step, (input_ids, labels) in enumerate(loader):
            logits = model(input_ids[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1), labels[:, 1:].flatten(), ignore_index=IGNORE)
            loss = loss / ACCUMULATION_STEPS
            loss.backward()
            if (step + 1) % ACCUMULATION_STEPS == 0 or step + 1 == len(loader):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()


def finetune_accelerate(model, dataset, pad_id, epochs=2):
    accelerator = Accelerator(gradient_accumulation_steps=ACCUMULATION_STEPS)
    loader = DataLoader(dataset, batch_size=4, shuffle=True, collate_fn=lambda b: collate(b, pad_id))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    model.train()
    for epoch in range(epochs):
        for input_ids, labels in loader:
            with accelerator.accumulate(model):
                loss = next_token_loss(model, input_ids, labels)
                accelerator.backward(loss / ACCUMULATION_STEPS)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
