"""EDM-style accumulation: a per-pixel loss summed over each micro-batch and scaled by `.mul()` with the reciprocal
of the whole batch's size (micro-batch size times the number of rounds): the window's gradient is the batch mean."""
import torch


def training_loop(net, loss_fn, optimizer, dataset_iterator, batch_gpu, num_accumulation_rounds, loss_scaling=1.0):
    batch_gpu_total = batch_gpu * num_accumulation_rounds
    while True:
        optimizer.zero_grad(set_to_none=True)
        for round_idx in range(num_accumulation_rounds):
            images, labels = next(dataset_iterator)
            loss = loss_fn(net=net, images=images, labels=labels)
            loss.sum().mul(loss_scaling / batch_gpu_total).backward()
        for param in net.parameters():
            if param.grad is not None:
                torch.nan_to_num(param.grad, nan=0, posinf=1e5, neginf=-1e5, out=param.grad)
        optimizer.step()
