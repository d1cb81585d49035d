"""GIN-style graph classifier: the loss is rebound to a detached NumPy value after the step, then summed for the epoch average."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


def train(model, device, train_graphs, optimizer, epoch, iters_per_epoch=50, batch_size=32):
    model.train()
    criterion = nn.CrossEntropyLoss()
    pbar = tqdm(range(iters_per_epoch), unit="batch")
    loss_accum = 0
    for pos in pbar:
        selected_idx = np.random.permutation(len(train_graphs))[:batch_size]
        batch_graph = [train_graphs[idx] for idx in selected_idx]
        output = model(batch_graph)
        labels = torch.LongTensor([graph.label for graph in batch_graph]).to(device)

        loss = criterion(output, labels)

        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        loss = loss.detach().cpu().numpy()
        loss_accum += loss

    average_loss = loss_accum / iters_per_epoch
    print("loss training: %f" % (average_loss))
    return average_loss


def train_scaled(model, loader, optimizer):
    running = 0.0
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss = float(loss)
        running += loss
    return running / len(loader)
