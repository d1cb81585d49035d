"""SSD training (d2l style): the epoch's total is a tensor because every batch loss is added with its
graph; after the loop it is averaged, detached and turned into a NumPy value for the plot. (`.item()` on
the added loss fixes the leak, but the `.detach()` after the loop must go with it: no automatic fix.)"""
import torch


def train(net, loss, train_loader, optimizer, animator, device, num_epochs):
    for epoch in range(num_epochs):
        net.train()
        train_loss = 0.0
        for i, (x, bb_true, class_true) in enumerate(train_loader):
            x = x.to(device)
            anchors, cls_preds, bbox_preds = net(x)
            batch_loss = loss(cls_preds, bbox_preds, class_true.to(device), bb_true.to(device), anchors)
            optimizer.zero_grad()
            batch_loss.backward()
            optimizer.step()
            train_loss += batch_loss  # expect: TL008
        train_loss = (train_loss / len(train_loader)).detach().cpu().numpy()
        animator.add(epoch, (train_loss,))
