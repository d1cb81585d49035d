"""The criterion is a loss class of the project (`core/losses.py`) whose `forward` returns an L1 mean over
the frames inside the utterances' lengths: their number varies from one micro-batch to the next, and the
loop divides that mean by the accumulation count."""
import torch

from core.losses import MaskedL1Loss


def train(model, loader, accum_steps, epochs):
    criterion = MaskedL1Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for step, (text, mels, mel_lengths) in enumerate(loader):
            predicted = model(text, mel_lengths)
            loss = criterion(predicted, mels, mel_lengths) / accum_steps  # expect: TL017
            loss.backward()
            if (step + 1) % accum_steps == 0 or step + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
