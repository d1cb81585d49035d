"""An optimizer built each iteration over tensors made in that iteration: their gradients start empty."""
import torch


def refine_latents(pipe, latents, timesteps, guidance):
    for t in timesteps:
        x_in = latents.detach().clone()
        x_in.requires_grad = True
        opt = torch.optim.SGD([x_in], lr=0.1)
        loss = guidance(pipe.unet(x_in, t))
        loss.backward()
        opt.step()
        latents = pipe.scheduler.step(x_in.detach(), t).prev_sample
    return latents


def adversarial(model, loader, criterion, epsilon=8 / 255):
    for images, labels in loader:
        delta = torch.zeros_like(images, requires_grad=True)
        attack = torch.optim.Adam([delta], lr=1e-2)
        loss = -criterion(model(images + delta), labels)
        loss.backward()
        attack.step()
        delta.data.clamp_(-epsilon, epsilon)


def invert_latents(generator, targets, steps, distance):
    for target in targets:
        z = torch.randn(1, 512, requires_grad=True)
        noise = [torch.zeros(1, 1, 4, 4).requires_grad_()]
        params = [z] + noise
        opt = torch.optim.Adam([{"params": params, "lr": 0.05}])
        loss = distance(generator(z, noise), target)
        loss.backward()
        opt.step()
