"""Seq2seq with teacher forcing: the decoder state starts from the encoder on every batch."""
import torch.nn.functional as F


def train_epoch(encoder, decoder, loader, optimizer, pad_idx):
    for src, tgt in loader:
        optimizer.zero_grad()
        enc_out, hidden = encoder(src)
        loss = 0.0
        for t in range(tgt.size(1) - 1):
            logits, hidden = decoder(tgt[:, t], hidden, enc_out)
            loss += F.cross_entropy(logits, tgt[:, t + 1], ignore_index=pad_idx)
        loss = loss / (tgt.size(1) - 1)
        loss.backward()
        optimizer.step()
