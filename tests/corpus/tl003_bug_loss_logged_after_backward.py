"""Dense GNN trainer: one graph per forward, a step every `batch_size` graphs, the loss logged after the backward."""
import torch


def train_epoch_dense(model, optimizer, device, data_loader, epoch, batch_size):
    model.train()
    epoch_loss = 0
    nb_data = 0
    optimizer.zero_grad()
    for iter, (x_with_node_feat, labels) in enumerate(data_loader):
        x_with_node_feat = x_with_node_feat.to(device)
        labels = labels.to(device)
        scores = model.forward(x_with_node_feat)
        loss = model.loss(scores, labels)
        loss.backward()  # expect: TL003
        if not ((iter + 1) % batch_size):  # expect: TL010
            optimizer.step()
            optimizer.zero_grad()
        epoch_loss += loss.detach().item()
        nb_data += labels.size(0)
    epoch_loss /= (iter + 1)
    return epoch_loss, optimizer
