"""Runs the training of `train.py` with a count of 3."""
from torch import nn

from train import train_accumulated

if __name__ == "__main__":
    train_accumulated(nn.Linear(10, 2), 3)
