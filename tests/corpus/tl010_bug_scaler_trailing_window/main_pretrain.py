import torch

import util.misc as misc
from engine_pretrain import train_one_epoch


def main(args):
    device = torch.device(args.device)
    model = build_model(args).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95))
    loss_scaler = misc.NativeScalerWithGradNormCount()
    for epoch in range(args.start_epoch, args.epochs):
        train_one_epoch(model, data_loader_train, optimizer, device, epoch, loss_scaler,
                        log_writer=None, args=args)


if __name__ == "__main__":
    main(get_args())
