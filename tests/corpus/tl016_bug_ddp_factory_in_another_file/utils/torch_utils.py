"""The factory the training script wraps its model with: a DDP wrap on every path, with options that depend on
the torch version."""
import os

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def smart_DDP(model):
    if torch.__version__ >= "1.11.0":
        return DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK, static_graph=True)
    else:
        return DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)


def de_parallel(model):
    return model.module if isinstance(model, DDP) else model
