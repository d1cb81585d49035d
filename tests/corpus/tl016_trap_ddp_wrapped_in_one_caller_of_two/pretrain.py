import torch

import engine


def pretrain(args, model, data_loader, criterion):
    device = torch.device("cuda")
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        engine.train_one_epoch(model, criterion, data_loader, optimizer, device, args.accum_iter)
