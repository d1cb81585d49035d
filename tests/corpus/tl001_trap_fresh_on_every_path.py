"""`loss` is assigned on every path before `+=`: a fresh loss each iteration, not an accumulator."""
import torch.nn.functional as F


def train_autoencoder(vae, discriminator, loader, optimizer, args):
    for images in loader:
        recon, commit_loss = vae(images)
        if args.recon_loss == "l2":
            loss = F.mse_loss(recon, images)
        else:
            loss = F.l1_loss(recon, images)
        loss += commit_loss
        loss += args.adv_weight * -discriminator(recon).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_tasks(model, batches, optimizer, task_losses, l2_penalty):
    for batch in batches:
        for loss in task_losses(model, batch):
            loss = loss + l2_penalty(model)
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
