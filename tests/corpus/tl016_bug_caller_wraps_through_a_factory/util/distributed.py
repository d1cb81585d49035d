"""The project's DDP factory, in a file of its own."""
import torch


def wrap_model(model, gpu):
    model = model.cuda(gpu)
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu], find_unused_parameters=False)


def unwrap_model(model):
    return model.module if hasattr(model, "module") else model
