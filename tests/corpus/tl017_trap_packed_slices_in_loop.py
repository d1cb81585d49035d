"""A character-level LM trained on one long tensor of ids: each micro-batch's inputs and targets are two
windows of `seq_len` ids cut from it one position apart, so every micro-batch has the same number of
targets and the padding id the criterion ignores never occurs."""
import torch
import torch.nn as nn


def train(model, ids, seq_len=256, accum=8, epochs=3, pad_id=0):
    criterion = nn.CrossEntropyLoss(ignore_index=pad_id)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    starts = range(0, ids.size(0) - seq_len - 1, seq_len)
    for epoch in range(epochs):
        for step, start in enumerate(starts):
            inputs = ids[start:start + seq_len].unsqueeze(0).cuda()
            targets = ids[start + 1:start + seq_len + 1].unsqueeze(0).cuda()
            logits = model(inputs)
            loss = criterion(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
            (loss / accum).backward()
            if (step + 1) % accum == 0 or step + 1 == len(starts):
                optimizer.step()
                optimizer.zero_grad()
