"""Correct training loops: plain, accumulated with a mean loss, accumulated with a summed loss,
with the last partial window stepped too.

torchlint reports nothing here.
"""

import torch
import torch.nn as nn


def train_plain(model, train_loader, optimizer, criterion):
    for i, (images, target) in enumerate(train_loader):
        outputs = model(images)
        loss = criterion(outputs, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_accumulated_mean(model, train_loader, optimizer, gradient_accumulation_steps: int = 4):
    criterion = nn.CrossEntropyLoss()
    for i, (images, target) in enumerate(train_loader):
        outputs = model(images)
        loss = criterion(outputs, target)
        loss = loss / gradient_accumulation_steps
        loss.backward()
        if (i + 1) % gradient_accumulation_steps == 0 or (i + 1) == len(train_loader):
            optimizer.step()
            optimizer.zero_grad()


def train_accumulated_sum(model, train_loader, optimizer, gradient_accumulation_steps: int = 4):
    # A summed loss over the window already equals the large batch's summed loss.
    criterion = nn.CrossEntropyLoss(reduction="sum")
    for i, (images, target) in enumerate(train_loader):
        loss = criterion(model(images), target)
        loss.backward()
        if (i + 1) % gradient_accumulation_steps == 0 or (i + 1) == len(train_loader):
            optimizer.step()
            optimizer.zero_grad()


def train_window_reset(model, loader, optimizer, criterion, n: int = 8):
    # `i % n == 0` here opens a window (reset before backward): correct.
    for i, (x, y) in enumerate(loader):
        if i % n == 0:
            optimizer.zero_grad()
        (criterion(model(x), y) / n).backward()
        if (i + 1) % n == 0 or (i + 1) == len(loader):
            optimizer.step()
