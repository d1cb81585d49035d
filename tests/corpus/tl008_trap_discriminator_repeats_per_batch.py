"""MelGAN-style trainer: the discriminator is updated `rep_discriminator` times on each batch, its losses summed
into a total set afresh for every batch and averaged for the log."""
import math

import torch


def train(model_g, model_d, optim_g, optim_d, trainloader, hp, logger):
    step = 0
    for epoch in range(hp.train.epochs):
        for mel, audio in trainloader:
            fake_audio = model_g(mel)[:, :, :hp.audio.segment_length].detach()
            loss_d_sum = 0.0
            for _ in range(hp.train.rep_discriminator):
                optim_d.zero_grad()
                disc_fake = model_d(fake_audio)
                disc_real = model_d(audio)
                loss_d = 0.0
                for (_, score_fake), (_, score_real) in zip(disc_fake, disc_real):
                    loss_d += torch.mean(torch.sum(torch.pow(score_real - 1.0, 2), dim=[1, 2]))
                    loss_d += torch.mean(torch.sum(torch.pow(score_fake, 2), dim=[1, 2]))
                loss_d.backward()
                optim_d.step()
                loss_d_sum += loss_d
            step += 1
            loss_d_avg = loss_d_sum / hp.train.rep_discriminator
            loss_d_avg = loss_d_avg.item()
            if loss_d_avg > 1e8 or math.isnan(loss_d_avg):
                logger.error("loss_d_avg %.01f at step %d!" % (loss_d_avg, step))
