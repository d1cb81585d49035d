"""Padded token labels, but the criterion's reduction is an option of the run (`--loss-reduction sum` by default):
a sum over tokens divided by the accumulation count is the window's total, so the loss is not known to be a
token mean and the division is not a finding."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def collate(examples):
    input_ids = pad_sequence([e["input_ids"] for e in examples], batch_first=True, padding_value=0)
    labels = pad_sequence([e["labels"] for e in examples], batch_first=True, padding_value=-100)
    return input_ids, labels


def train(model, dataset, args):
    criterion = nn.CrossEntropyLoss(ignore_index=-100, reduction=args.loss_reduction)
    loader = DataLoader(dataset, batch_size=4, shuffle=True, collate_fn=collate)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for step, (input_ids, labels) in enumerate(loader):
        logits = model(input_ids)
        loss = criterion(logits.view(-1, logits.size(-1)), labels.view(-1))
        loss = loss / args.accumulation_steps
        loss.backward()
        if (step + 1) % args.accumulation_steps == 0 or step + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
