import torch

from training.loop import run_epoch
from training.optim_wrapper import AmpOptimWrapper


def main(cfg):
    model = build_model(cfg)
    wrapper = AmpOptimWrapper(torch.optim.SGD(model.parameters(), lr=cfg.lr), clip=cfg.clip)
    for epoch in range(cfg.epochs):
        run_epoch(model, build_loader(cfg), wrapper, cfg.accum_steps, criterion=torch.nn.MSELoss())
