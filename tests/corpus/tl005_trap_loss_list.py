"""Task losses collected first, then backpropagated one by one through the shared graph."""
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, (y_seg, y_depth) in loader:
        optimizer.zero_grad()
        seg, depth = model(x)
        task_losses = [F.cross_entropy(seg, y_seg), F.l1_loss(depth, y_depth)]
        for task_loss in task_losses:
            task_loss.backward(retain_graph=True)
        optimizer.step()
