"""The LAVIS task shape: the loss comes from the task's `train_step`, which calls the model it is handed and
returns its `"loss"` output, a mean over the micro-batch; the loop never divides it by `accum_grad_iters`."""
import torch


class BaseTask:
    def train_step(self, model, samples):
        loss = model(samples)["loss"]
        return loss

    def train_inner_loop(self, model, data_loader, optimizer, accum_grad_iters, iters_per_epoch):
        for i in range(iters_per_epoch):
            samples = next(data_loader)
            loss = self.train_step(model=model, samples=samples)
            loss.backward()  # expect: TL003
            if (i + 1) % accum_grad_iters == 0 or i + 1 == iters_per_epoch:
                optimizer.step()
                optimizer.zero_grad()
