"""Instruction tuning on sequences of different lengths: the collate function pads the labels with -100, so
each micro-batch's loss is a mean over a different number of real tokens, and dividing it by
`accumulation_steps` weighs the tokens of short micro-batches more."""
import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def collate(examples):
    input_ids = pad_sequence([e["input_ids"] for e in examples], batch_first=True, padding_value=0)
    labels = pad_sequence([e["labels"] for e in examples], batch_first=True, padding_value=-100)
    return input_ids, labels


def train(model, dataset, accumulation_steps=8, epochs=2):
    loader = DataLoader(dataset, batch_size=4, shuffle=True, collate_fn=collate)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(epochs):
        for step, (input_ids, labels) in enumerate(loader):
            logits = model(input_ids.cuda())
            shift_logits = logits[:, :-1].contiguous()
            shift_labels = labels[:, 1:].contiguous().cuda()
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1),
                                   ignore_index=-100)
            loss = loss / accumulation_steps  # expect: TL017
            loss.backward()
            if (step + 1) % accumulation_steps == 0 or step + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
