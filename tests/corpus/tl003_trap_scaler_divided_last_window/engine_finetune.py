"""A fine-tuning epoch written right: the loss divided by `accum_iter` before `loss_scaler` (built in
main_finetune.py) backpropagates it, and the last micro-batch of the epoch steps too."""
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler, max_norm=0,
                    mixup_fn=None, args=None):
    model.train(True)
    accum_iter = args.accum_iter
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        if mixup_fn is not None:
            samples, targets = mixup_fn(samples, targets)
        with torch.cuda.amp.autocast():
            outputs = model(samples)
            loss = criterion(outputs, targets)
        loss = loss / accum_iter
        boundary = (data_iter_step + 1) % accum_iter == 0 or data_iter_step + 1 == len(data_loader)
        loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters(),
                    create_graph=False, update_grad=boundary)
        if boundary:
            optimizer.zero_grad()
