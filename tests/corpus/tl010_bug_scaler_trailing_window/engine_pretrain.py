"""MAE's pretraining epoch: the loss is divided by `accum_iter`, but the step (in `loss_scaler`, built in
main_pretrain.py) only runs when `(data_iter_step + 1) % accum_iter == 0`: when the epoch's length is not a
multiple of `accum_iter`, its last micro-batches are never applied (the reset before the loop drops them)."""
import torch

import util.misc as misc


def train_one_epoch(model, data_loader, optimizer, device, epoch, loss_scaler, log_writer=None, args=None):
    model.train(True)
    metric_logger = misc.MetricLogger(delimiter="  ")
    accum_iter = args.accum_iter
    optimizer.zero_grad()
    for data_iter_step, (samples, _) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            loss, _, _ = model(samples, mask_ratio=args.mask_ratio)
        loss_value = loss.item()
        loss /= accum_iter
        loss_scaler(loss, optimizer, parameters=model.parameters(),
                    update_grad=(data_iter_step + 1) % accum_iter == 0)  # expect: TL010
        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()
        metric_logger.update(loss=loss_value)
    return metric_logger
