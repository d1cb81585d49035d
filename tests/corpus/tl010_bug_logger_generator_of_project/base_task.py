"""The inner loop walks `range(iters_per_epoch)` through the project's `MetricLogger.log_every`, which hands on
each element as it comes (timing and printing around it): `i` numbers the micro-batches from 0, and the last
window of an epoch that `accum_grad_iters` does not divide is never stepped."""
import torch

from common.logger import MetricLogger


class BaseTask:
    def train_epoch(self, epoch, model, data_loader, optimizer, accum_grad_iters=1):
        return self._train_inner_loop(epoch, len(data_loader), model, data_loader, optimizer, accum_grad_iters)

    def _train_inner_loop(self, epoch, iters_per_epoch, model, data_loader, optimizer, accum_grad_iters):
        data_loader = iter(data_loader)
        metric_logger = MetricLogger(delimiter="  ")
        for i in metric_logger.log_every(range(iters_per_epoch), 50, f"Train: [{epoch}]"):
            samples = next(data_loader)
            loss = model(samples)["loss"]
            loss /= accum_grad_iters
            loss.backward()
            if (i + 1) % accum_grad_iters == 0:  # expect: TL010
                optimizer.step()
                optimizer.zero_grad()
            metric_logger.update(loss=loss.item())
