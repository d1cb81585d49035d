"""Image classification: each micro-batch's cross-entropy is a mean over a fixed number of images, so
dividing it by the accumulation count is exactly the large batch's mean."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train(model, dataset, accum_iter=4, epochs=90):
    loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=True, num_workers=8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
    for epoch in range(epochs):
        for data_iter_step, (samples, targets) in enumerate(loader):
            outputs = model(samples)
            loss = F.cross_entropy(outputs, targets, label_smoothing=0.1)
            loss = loss / accum_iter
            loss.backward()
            if (data_iter_step + 1) % accum_iter == 0 or data_iter_step + 1 == len(loader):
                optimizer.step()
                optimizer.zero_grad()
