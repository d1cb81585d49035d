"""The project's loss class (`losses.py`) sums the frames inside the lengths and divides by the number of
utterances: a mean over a fixed number of samples per micro-batch, so dividing it by the accumulation count
is right."""
import torch

from losses import MaskedL1Loss


def train(model, loader, accum_steps, epochs):
    criterion = MaskedL1Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for step, (text, mels, mel_lengths) in enumerate(loader):
            predicted = model(text, mel_lengths)
            loss = criterion(predicted, mels, mel_lengths) / accum_steps
            loss.backward()
            if (step + 1) % accum_steps == 0 or step + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
